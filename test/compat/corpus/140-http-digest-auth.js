// Issue #9: auth: 'digest' answers the server's challenge; the challenge
// round trip is one request in k6's metrics.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const host = __ENV.BASE.replace('http://', '');
  const ok = http.get(`http://alice:s3cret@${host}/digest-auth/alice/s3cret`, { auth: 'digest' });
  check(ok, { [`digest status ${ok.status}`]: () => true, 'authenticated': (r) => r.status === 200 && r.json('user') === 'alice' });
}
