// --http-debug=full as k6 writes it: per hop (a redirect's too) a
// "Request:" and a "Response:" line at level info, each with its dump and
// body (the response's as it came, gzip), with the fields group, iter,
// request_id, scenario, source=http-debug, vu and the request's tags; a
// refused request has its "Request:" line only. The script names its
// User-Agent and Accept-Encoding: k6's dump shows "Accept-Encoding: gzip"
// where k6 sends none (docs/k6-compatibility.md, Log lines).
// compat:args --http-debug=full
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
