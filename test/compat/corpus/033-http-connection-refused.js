// A connection refused on loopback: status 0, k6's error code, tags.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.get('http://127.0.0.1:1/nothing');
  check(res, {
    'status 0': (r) => r.status === 0,
    [`error_code ${res.error_code}`]: () => true,
  });
}
