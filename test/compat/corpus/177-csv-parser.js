// k6/experimental/csv's Parser: next() row by row, with asObjects and a
// line range.
import { open } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';
import { check } from 'k6';

// Parsers are made in the init context, as k6 requires, each on a file of
// its own (a file's read position is shared).
const parser = new csv.Parser(await open('./data/users.csv'), { asObjects: true });
const ranged = new csv.Parser(await open('./data/users.csv'), { skipFirstLine: true, fromLine: 2, toLine: 3 });

export const options = { iterations: 1 };

export default async function () {
  const rows = [];
  for (;;) {
    const { done, value } = await parser.next();
    if (done) break;
    rows.push(`${value.id}:${value.name}:${value.role}`);
  }
  const first = await ranged.next();
  check(null, {
    [`rows ${rows.join(' ')}`]: () => true,
    [`ranged ${first.done} ${JSON.stringify(first.value)}`]: () => true,
  });
}
