// http.batch with an array of URLs and of [method, url, body, params].
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2 };

export default function () {
  const rs = http.batch([
    `${__ENV.BASE}/`,
    ['GET', `${__ENV.BASE}/json`],
    ['POST', `${__ENV.BASE}/echo`, 'payload', { tags: { batched: 'yes' } }],
  ]);
  check(rs, {
    'three responses': (r) => r.length === 3,
    'first ok': (r) => r[0].body === 'ok\n',
    'second json': (r) => r[1].json('name') === 'metronome',
    'third echoed': (r) => r[2].json('body') === 'payload',
  });
}
