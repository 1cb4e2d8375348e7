// Under HTTP_PROXY, k6 checks blacklistIPs and blockHostnames on the
// proxy's address only and sends a blocked host to the proxy; metronome
// also refuses, before the proxy is asked, a host name blockHostnames
// blocks and a URL whose host is a blacklisted IP address, with the
// errors of a direct request (1111, 1110).
// compat:env HTTP_PROXY=${PROXY} HTTPS_PROXY=${PROXY} NO_PROXY= no_proxy=
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, blockHostnames: ['*.blocked.test'], blacklistIPs: ['10.0.0.0/8'] };

export default function () {
  for (const url of ['http://a.blocked.test/headers', 'http://10.1.2.3/headers', 'http://allowed.test/headers']) {
    const r = http.get(url);
    check(r, { [`${url}: ${r.status} ${r.error_code} ${r.error}`]: () => true });
  }
}
