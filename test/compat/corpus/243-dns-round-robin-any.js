// Issue 37 item 8: dns select roundRobin, policy any: every address of
// multi.test in turn, in the order the system resolver gives them (::1
// first), as k6 v2.2.0 dials them.
// compat:etc-hosts
import http from 'k6/http';
import { check } from 'k6';

// Check names may not hold '::' (k6's group separator): ::1 is shown as __1.
const ip = (a) => String(a).replace(/:/g, '_');

export const options = { iterations: 1, noConnectionReuse: true, dns: { select: 'roundRobin', policy: 'any', ttl: 'inf' } };

export default function () {
  for (let i = 0; i < 6; i++) {
    const res = http.get(`${__ENV.MULTI}/`);
    check(res, { [`multi #${i} dialled ${ip(res.remote_ip)}`]: (r) => r.status === 200 && r.json('local') === r.remote_ip });
  }
}
