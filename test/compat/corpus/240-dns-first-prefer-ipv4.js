// Issue 37 item 8: dns select first, default policy (preferIPv4). k6
// v2.2.0 dials the first IPv4 address of multi.test every time, and the
// IPv6 one of six.test (the policy falls back to IPv6).
// compat:etc-hosts
import http from 'k6/http';
import { check } from 'k6';

// Check names may not hold '::' (k6's group separator): ::1 is shown as __1.
const ip = (a) => String(a).replace(/:/g, '_');

export const options = { iterations: 1, noConnectionReuse: true, dns: { select: 'first' } };

export default function () {
  for (const [label, base] of [['multi', __ENV.MULTI], ['four', __ENV.V4], ['six', __ENV.V6]]) {
    for (let i = 0; i < 3; i++) {
      const res = http.get(`${base}/`);
      check(res, { [`${label} #${i} dialled ${ip(res.remote_ip)}`]: (r) => r.status === 200 && r.json('local') === r.remote_ip });
    }
  }
}
