// Issue 37 item 8: K6_LOCAL_IPS, a range. k6 v2.2.0 binds VU n to the
// address at (n-1) modulo the pool's size, and setup and teardown to the
// first; the server tells each request where it came from.
// compat:named
// compat:env K6_LOCAL_IPS=127.0.0.5-127.0.0.7
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: { each: { executor: 'per-vu-iterations', vus: 5, iterations: 2 } },
  noConnectionReuse: true,
};

function from(label) {
  const res = http.get(`${__ENV.NAMED_IP}/`);
  check(res, { [`${label} from ${res.json('peer')}`]: (r) => r.status === 200 });
}

export function setup() { from('setup'); }
export default function () { from(`vu ${__VU}`); }
export function teardown() { from('teardown'); }
