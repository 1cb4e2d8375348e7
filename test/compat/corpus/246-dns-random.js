// Issue 37 item 8: the default dns option (select random, policy
// preferIPv4, ttl 5m). k6 v2.2.0 picks among multi.test's IPv4 addresses
// at random, so the checks assert the distribution: over 150 new
// connections each of the three is dialled at least 20 times (mean 50,
// sd 5.8: it fails once in 10⁷ runs), and ::1 never.
// compat:etc-hosts
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, noConnectionReuse: true };

export default function () {
  const seen = {};
  for (let i = 0; i < 150; i++) {
    const res = http.get(`${__ENV.MULTI}/`);
    seen[res.remote_ip] = (seen[res.remote_ip] || 0) + 1;
  }
  const addrs = Object.keys(seen).sort();
  check(seen, {
    [`dialled ${addrs.join(' ')}`]: () => true,
    'each at least 20 times': (s) => addrs.every((a) => s[a] >= 20),
  });
}
