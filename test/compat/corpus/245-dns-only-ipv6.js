// Issue 37 item 8: dns policy onlyIPv6. A name with no IPv6 address
// (four.test) fails as in k6 v2.2.0: "lookup four.test: no such host",
// error_code 1000 (not 1101: the lookup itself succeeded), counted in
// http_reqs and http_req_failed.
// compat:etc-hosts
import http from 'k6/http';
import { check } from 'k6';

// Check names may not hold '::' (k6's group separator): ::1 is shown as __1.
const ip = (a) => String(a).replace(/:/g, '_');

export const options = { iterations: 1, noConnectionReuse: true, dns: { select: 'first', policy: 'onlyIPv6', ttl: '1000' } };

export default function () {
  for (const [label, base] of [['multi', __ENV.MULTI], ['four', __ENV.V4], ['four', __ENV.V4], ['six', __ENV.V6]]) {
    const res = http.get(`${base}/`);
    check(res, { [`${label} dialled '${ip(res.remote_ip)}' error '${res.error}' code ${res.error_code}`]: () => true });
  }
}
