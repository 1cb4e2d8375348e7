// response.request describes what was sent.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const r = http.post(`${__ENV.BASE}/echo`, 'hello', { headers: { 'X-Req': 'r1' } });
  check(r.request, {
    'request method': (q) => q.method === 'POST',
    'request url': (q) => q.url === `${__ENV.BASE}/echo`,
    'request body': (q) => q.body === 'hello',
    'request header': (q) => q.headers['X-Req'] && q.headers['X-Req'][0] === 'r1',
  });
}
