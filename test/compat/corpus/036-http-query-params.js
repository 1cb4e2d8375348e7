// Query strings reach the server unchanged; the url tag keeps them.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const r = http.get(`${__ENV.BASE}/echo?a=1&b=two&c=%20space`);
  check(r, {
    'a': (x) => x.json('query.a') === '1',
    'b': (x) => x.json('query.b') === 'two',
    'c decoded': (x) => x.json('query.c') === ' space',
  });
}
