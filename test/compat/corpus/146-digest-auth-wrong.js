// Issue #9: digest auth with a wrong password stays 401.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const host = __ENV.BASE.replace('http://', '');
  const res = http.get(`http://alice:wrong@${host}/digest-auth/alice/s3cret`, { auth: 'digest' });
  check(res, { [`status ${res.status}`]: () => true });
}
