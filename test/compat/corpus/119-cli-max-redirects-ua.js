// --max-redirects and --user-agent flags.
// compat:args --max-redirects=1 --user-agent=flag-agent
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(http.get(`${__ENV.BASE}/redirect/3`), { [`status with one redirect`]: (r) => r.status === 302 });
  check(http.get(`${__ENV.BASE}/headers`), { 'flag UA': (r) => r.json('headers.User-Agent') === 'flag-agent' });
}
