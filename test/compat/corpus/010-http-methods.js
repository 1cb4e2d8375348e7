// Every verb helper of k6/http and http.request, against an echo server.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const u = `${__ENV.BASE}/echo`;
  const method = (r) => r.json('method');
  check(http.get(u), { 'get': (r) => method(r) === 'GET' });
  check(http.post(u, 'x'), { 'post': (r) => method(r) === 'POST' && r.json('body') === 'x' });
  check(http.put(u, 'y'), { 'put': (r) => method(r) === 'PUT' && r.json('body') === 'y' });
  check(http.patch(u, 'z'), { 'patch': (r) => method(r) === 'PATCH' });
  check(http.del(u), { 'del': (r) => method(r) === 'DELETE' });
  check(http.options(u), { 'options': (r) => method(r) === 'OPTIONS' });
  check(http.head(u), { 'head has no body': (r) => r.status === 200 && r.body === '' });
  check(http.request('PURGE', u), { 'request PURGE': (r) => method(r) === 'PURGE' });
  check(http.request('GET', u, null, { tags: { via: 'request' } }), { 'request GET': (r) => r.status === 200 });
}
