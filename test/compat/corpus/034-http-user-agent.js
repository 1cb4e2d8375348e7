// options.userAgent replaces the default User-Agent; a header in params
// overrides it.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, userAgent: 'compat-agent/1.0' };

export default function () {
  check(http.get(`${__ENV.BASE}/headers`), { 'option UA': (r) => r.json('headers.User-Agent') === 'compat-agent/1.0' });
  check(http.get(`${__ENV.BASE}/headers`, { headers: { 'User-Agent': 'per-request' } }), { 'param UA': (r) => r.json('headers.User-Agent') === 'per-request' });
}
