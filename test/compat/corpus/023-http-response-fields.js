// The response object's fields, read back through check names.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const r = http.get(`${__ENV.BASE}/status/201`);
  const t = r.timings;
  check(r, {
    [`status ${r.status}`]: () => true,
    [`status_text ${r.status_text}`]: () => true,
    [`proto ${r.proto}`]: () => true,
    [`url ${r.url.replace(__ENV.BASE, 'BASE')}`]: () => true,
    [`error '${r.error}' code ${r.error_code}`]: () => true,
    [`timing keys ${Object.keys(t).sort().join(',')}`]: () => true,
    'timings are numbers': () => ['duration', 'blocked', 'connecting', 'sending', 'waiting', 'receiving'].every((k) => typeof t[k] === 'number' && t[k] >= 0),
    [`request method ${r.request.method}`]: () => true,
    [`body type ${typeof r.body}`]: () => true,
    [`cookies type ${typeof r.cookies}`]: () => true,
  });
}
