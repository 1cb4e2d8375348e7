// Basic authentication from credentials in the URL.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const host = __ENV.BASE.replace('http://', '');
  const ok = http.get(`http://alice:s3cret@${host}/basic-auth/alice/s3cret`);
  check(ok, { 'authenticated': (r) => r.status === 200 && r.json('user') === 'alice' });
  const wrong = http.get(`http://alice:nope@${host}/basic-auth/alice/s3cret`);
  check(wrong, { 'wrong password is 401': (r) => r.status === 401 });
  const none = http.get(`${__ENV.BASE}/basic-auth/alice/s3cret`);
  check(none, { 'no credentials is 401': (r) => r.status === 401 });
}
