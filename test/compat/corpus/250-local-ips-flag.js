// Issue 37 item 8: --local-ips, an address and a CIDR block. An IPv4
// block of more than two addresses leaves out its network and broadcast
// addresses (127.0.0.0/30 gives 127.0.0.1 and 127.0.0.2), and VU n takes
// the address at (n-1) modulo 3, as in k6 v2.2.0.
// compat:named
// compat:args --local-ips 127.0.0.8,127.0.0.0/30
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: { each: { executor: 'per-vu-iterations', vus: 4, iterations: 1 } },
};

export default function () {
  const res = http.get(`${__ENV.NAMED_IP}/`);
  check(res, { [`vu ${__VU} from ${res.json('peer')}`]: (r) => r.status === 200 });
}
