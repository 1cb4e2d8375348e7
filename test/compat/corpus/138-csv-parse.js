// Issue #9: k6/experimental/csv parse into a SharedArray-like result.
import { open } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';
import { check } from 'k6';

const file = await open('./data/users.csv');
const rows = await csv.parse(file, { delimiter: ',', skipFirstLine: true });

export const options = { iterations: 1 };

export default function () {
  check(null, {
    [`rows ${rows.length}`]: () => true,
    [`second ${rows[1].join('|')}`]: () => true,
  });
}
