// Two scenarios with exec functions, startTime, tags and env.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    browse: { executor: 'per-vu-iterations', vus: 2, iterations: 2, exec: 'browse', tags: { flow: 'browse' } },
    buy: { executor: 'shared-iterations', vus: 1, iterations: 3, exec: 'buy', startTime: '300ms', env: { ITEM: 'apple' } },
  },
};

export function browse() {
  http.get(`${__ENV.BASE}/json`);
}

export function buy() {
  const r = http.post(`${__ENV.BASE}/echo`, JSON.stringify({ item: __ENV.ITEM }), { headers: { 'Content-Type': 'application/json' } });
  check(r, { 'bought apple': (x) => x.json('json.item') === 'apple' });
}
