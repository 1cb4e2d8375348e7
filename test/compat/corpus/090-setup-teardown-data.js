// setup() data reach every iteration and teardown; a VU's iterations
// share one copy, so a change made in one iteration shows in its next.
import { check } from 'k6';
import http from 'k6/http';

export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: 3 } } };

export function setup() {
  const r = http.get(`${__ENV.BASE}/json`);
  return { name: r.json('name'), list: [1, 'two', null], nested: { deep: true } };
}

export default function (data) {
  check(data, {
    'array kept': (d) => d.list.length === 3 && d.list[2] === null,
    [`iteration ${__ITER} sees name ${data.name}`]: () => true,
  });
  data.name = 'changed';
}

export function teardown(data) {
  check(data, { 'teardown gets setup data': (d) => d.name === 'metronome' && d.nested.deep === true });
}
