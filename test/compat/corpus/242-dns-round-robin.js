// Issue 37 item 8: dns select roundRobin, default policy (preferIPv4).
// k6 v2.2.0 dials multi.test's three IPv4 addresses in turn, one turn
// per new connection; six.test has one address (IPv6, the fallback).
// compat:etc-hosts
import http from 'k6/http';
import { check } from 'k6';

// Check names may not hold '::' (k6's group separator): ::1 is shown as __1.
const ip = (a) => String(a).replace(/:/g, '_');

export const options = { iterations: 1, noConnectionReuse: true, dns: { select: 'roundRobin' } };

export default function () {
  for (const [label, base, n] of [['multi', __ENV.MULTI, 7], ['six', __ENV.V6, 2]]) {
    for (let i = 0; i < n; i++) {
      const res = http.get(`${base}/`);
      check(res, { [`${label} #${i} dialled ${ip(res.remote_ip)}`]: (r) => r.status === 200 && r.json('local') === r.remote_ip });
    }
  }
}
