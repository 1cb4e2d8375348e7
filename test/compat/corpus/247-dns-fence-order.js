// Issue 37 item 8: where the dns resolver stands among the network
// options, as in k6 v2.2.0: blockHostnames refuses a name before any
// lookup, hosts pins a name before the resolver, and blacklistIPs judges
// the one address the resolver chose (roundRobin here): the turn that
// picks the blacklisted 127.0.0.2 fails with 1110, no other address is
// tried, and the next turn dials 127.0.0.3.
// compat:etc-hosts
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  iterations: 1,
  noConnectionReuse: true,
  dns: { select: 'roundRobin' },
  blacklistIPs: ['127.0.0.2/32'],
  hosts: { 'four.test': '127.0.0.6' },
  blockHostnames: ['six.test'],
};

export default function () {
  const runs = [['multi', __ENV.MULTI], ['multi', __ENV.MULTI], ['multi', __ENV.MULTI], ['multi', __ENV.MULTI],
    ['four', __ENV.V4], ['six', __ENV.V6]];
  runs.forEach(([label, base], i) => {
    const res = http.get(`${base}/`);
    check(res, { [`#${i} ${label} dialled '${res.remote_ip}' error '${res.error}' code ${res.error_code}`]: () => true });
  });
}
