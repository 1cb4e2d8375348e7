// A JSON body with a Content-Type header; the echo parses it back.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2 };

export default function () {
  const payload = JSON.stringify({ user: 'alice', n: __ITER, list: [1, 2] });
  const res = http.post(`${__ENV.BASE}/echo`, payload, { headers: { 'Content-Type': 'application/json' } });
  check(res, {
    'content type sent': (r) => r.json('content_type') === 'application/json',
    'user echoed': (r) => r.json('json.user') === 'alice',
    'list echoed': (r) => r.json('json.list.1') === 2,
    [`n echoed ${__ITER}`]: (r) => r.json('json.n') === __ITER,
  });
}
