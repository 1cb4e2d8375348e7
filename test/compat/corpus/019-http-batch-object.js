// http.batch with named requests given as objects.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const rs = http.batch({
    home: `${__ENV.BASE}/`,
    api: { method: 'GET', url: `${__ENV.BASE}/json`, params: { tags: { name: 'api' } } },
    send: { method: 'POST', url: `${__ENV.BASE}/echo`, body: { a: '1' } },
    missing: { method: 'GET', url: `${__ENV.BASE}/status/404` },
  });
  check(rs, {
    'keys': (r) => Object.keys(r).sort().join(',') === 'api,home,missing,send',
    'api': (r) => r.api.json('count') === 3,
    'send form': (r) => r.send.json('form.a') === '1',
    'missing 404': (r) => r.missing.status === 404,
  });
}
