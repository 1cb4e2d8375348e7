// Per-request params inside http.batch: a timeout on one request only.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const rs = http.batch([
    ['GET', `${__ENV.BASE}/slow?ms=1500`, null, { timeout: '150ms' }],
    ['GET', `${__ENV.BASE}/slow?ms=20`],
  ]);
  check(rs, { 'first timed out': (r) => r[0].status === 0 && r[0].error_code === 1050, 'second ok': (r) => r[1].status === 200 });
}
