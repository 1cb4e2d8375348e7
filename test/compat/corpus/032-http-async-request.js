// http.asyncRequest in an async default function; promises resolve to
// responses.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2 };

export default async function () {
  const [a, b] = await Promise.all([
    http.asyncRequest('GET', `${__ENV.BASE}/json`),
    http.asyncRequest('POST', `${__ENV.BASE}/echo`, 'async body'),
  ]);
  check(a, { 'async get': (r) => r.json('count') === 3 });
  check(b, { 'async post': (r) => r.json('body') === 'async body' });
}
