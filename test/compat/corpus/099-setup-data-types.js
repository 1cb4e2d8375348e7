// How setup() data survive the trip to the VUs: a Date and an undefined
// property.
import { check } from 'k6';

export const options = { iterations: 1 };

export function setup() {
  return { when: new Date(0), skip: undefined, n: 1.5 };
}

export default function (data) {
  check(data, {
    [`Date arrives as ${JSON.stringify(data.when)}`]: () => true,
    [`undefined arrives as ${'skip' in data ? JSON.stringify(data.skip) : 'absent'}`]: () => true,
    'number kept': (d) => d.n === 1.5,
  });
}
