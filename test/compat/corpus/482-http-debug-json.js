// --http-debug=full with --log-format=json as k6 writes it: one object per
// line, the fields as keys beside level, msg and time, iter and vu as
// numbers, the message escaped as encoding/json escapes it (& as \u0026).
// compat:args --http-debug=full --log-format=json
// compat:log source=http-debug
import http from 'k6/http';
import { group } from 'k6';

export const options = { iterations: 1, userAgent: 'compat-debug' };

const params = { headers: { 'Accept-Encoding': 'identity' } };

export default function () {
  http.get(`${__ENV.BASE}/`, params);
  http.post(`${__ENV.BASE}/raw`, 'a=1&b=two', {
    headers: { 'Accept-Encoding': 'identity', 'X-Zed': 'z', 'A-First': 'a' },
    tags: { mytag: 'v' },
  });
  http.get(`${__ENV.BASE}/redirect/1`, params);
  group('g1', () => {
    http.get(`${__ENV.BASE}/gzip`, params);
  });
  http.get('http://127.0.0.1:1/refused', params);
  http.batch([
    ['POST', `${__ENV.BASE}/raw`, 'batchbody', params],
    ['GET', `${__ENV.BASE}/?b=1`, null, params],
  ]);
}
