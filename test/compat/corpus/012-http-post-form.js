// An object body is sent form-urlencoded.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.post(`${__ENV.BASE}/echo`, { user: 'bob', city: 'Zürich', empty: '' });
  check(res, {
    'urlencoded content type': (r) => r.json('content_type').startsWith('application/x-www-form-urlencoded'),
    'user field': (r) => r.json('form.user') === 'bob',
    'utf-8 field': (r) => r.json('form.city') === 'Zürich',
    'empty field': (r) => r.json('form.empty') === '',
  });
}
