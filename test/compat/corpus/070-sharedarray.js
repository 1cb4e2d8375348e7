// SharedArray from a JSON file: length, indexing, iteration, immutability.
import { SharedArray } from 'k6/data';
import { check } from 'k6';

const users = new SharedArray('users', function () {
  return JSON.parse(open('./data/users.json'));
});

export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 4 } } };

export default function () {
  const u = users[__ITER % users.length];
  check(u, {
    [`length ${users.length}`]: () => true,
    'has name': (x) => typeof x.name === 'string',
    'for-of works': () => { let n = 0; for (const x of users) { n += x.id; } return n === 6; },
    'map works': () => users.map((x) => x.name).join(',') === 'ann,ben,cy',
  });
}
