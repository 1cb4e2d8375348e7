// A request timeout: status 0, an error, k6's error code and a failed
// request.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE}/slow?ms=2000`, { timeout: '200ms' });
  check(res, {
    'status 0': (r) => r.status === 0,
    'has error': (r) => r.error !== '',
    [`error_code ${res.error_code}`]: () => true,
  });
  const ok = http.get(`${__ENV.BASE}/slow?ms=10`, { timeout: 2000 });
  check(ok, { 'slow but in time': (r) => r.status === 200 });
}
