// A proxy whose own address is blacklisted refuses every request sent
// through it, reported whole as k6 reports it (1200, "proxyconnect tcp:
// …"), while the warning names the options the proxy makes moot.
// compat:env HTTP_PROXY=${PROXY} NO_PROXY= no_proxy=
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, blacklistIPs: ['127.0.0.0/8'] };

export default function () {
  const r = http.get('http://target.test/');
  check(r, { [`${r.status} ${r.error_code} ${r.error.replace(/127\.0\.0\.1:\d+/, 'PROXY_HOST')}`]: () => true });
}
