// Issue 37 item 8: a localIPs address this machine does not have
// (192.0.2.1, TEST-NET-1) fails every connection of the VU when it binds,
// before anything is sent: k6 v2.2.0's error_code 1213 and its words
// ("dial: unknown errno N error with msg `cannot assign requested
// address`"), counted in http_reqs and http_req_failed.
// compat:named
// compat:env K6_LOCAL_IPS=192.0.2.1
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2 };

export default function () {
  const res = http.get(`${__ENV.NAMED_IP}/`);
  check(res, { [`error '${res.error}' code ${res.error_code}`]: (r) => r.status === 0 });
}
