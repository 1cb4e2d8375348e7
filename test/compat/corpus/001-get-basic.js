// The smallest script: one VU, three iterations, one GET and a check each.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 3 };

export default function () {
  const res = http.get(`${__ENV.BASE}/`);
  check(res, { 'status is 200': (r) => r.status === 200, 'body is ok': (r) => r.body === 'ok\n' });
}
