// Request headers from params, response headers on the response object.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE}/headers`, { headers: { 'X-One': '1', 'x-lower': 'low', Accept: 'text/plain' } });
  check(res, {
    'custom header sent': (r) => r.json('headers.X-One') === '1',
    'header name canonicalised': (r) => r.json('headers.X-Lower') === 'low',
    'accept sent': (r) => r.json('headers.Accept') === 'text/plain',
    'response header': (r) => r.headers['X-Compat'] === 'yes',
    'multi-value response header': (r) => r.headers['X-Multi'] === 'one, two',
    'content type header': (r) => r.headers['Content-Type'] === 'application/json',
  });
}
