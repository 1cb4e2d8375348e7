// Issue 37 item 8: k6 v2.2.0 reads localIPs only from K6_LOCAL_IPS and
// --local-ips; in script options it warns of an unknown field and dials
// from the system's address. metronome does the same (with its own
// warning).
// compat:named
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2, localIPs: '127.0.0.9' };

export default function () {
  const res = http.get(`${__ENV.NAMED_IP}/`);
  check(res, { [`from ${res.json('peer')}`]: (r) => r.status === 200 });
}
