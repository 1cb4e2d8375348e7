// 3 VUs × 4 iterations with checks, a group, a custom counter and
// thresholds of which two fail.
import http from 'k6/http';
import { check, group } from 'k6';
import { Counter } from 'k6/metrics';

const items = new Counter('items_processed');

export const options = {
  scenarios: { s: { executor: 'per-vu-iterations', vus: 3, iterations: 4 } },
  thresholds: {
    items_processed: ['count==36', 'count>100'],
    checks: ['rate>0.9'],
  },
};

export function setup() {
  return { token: 'abc', n: 7 };
}

export default function () {
  const res = http.get(__ENV.TARGET);
  check(res, {
    'status is 200': (r) => r.status === 200,
    'body is long': (r) => r.body.length > 100,
  });
  items.add(3);
  group('inner', function () {
    check(__ITER, { 'even iteration': (i) => i % 2 === 0 });
  });
}
