// Nested groups: group paths, checks and requests inside them, and the
// value group() returns.
import http from 'k6/http';
import { check, group } from 'k6';

export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 2 } } };

export default function () {
  const v = group('outer', function () {
    http.get(`${__ENV.BASE}/json`);
    group('inner', function () {
      const res = http.get(`${__ENV.BASE}/`);
      check(res, { 'inner ok': (r) => r.status === 200 });
    });
    check(null, { 'outer check': () => true });
    return 42;
  });
  check(v, { 'group returns the function value': (x) => x === 42 });
}
