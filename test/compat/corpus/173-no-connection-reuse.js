// noConnectionReuse: every request opens a new connection, so each one
// spends time connecting.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, noConnectionReuse: true };

export default function () {
  http.get(`${__ENV.BASE}/`);
  const r = http.get(`${__ENV.BASE}/`);
  check(r, { 'second request connected again': (x) => x.timings.connecting > 0 });
}
