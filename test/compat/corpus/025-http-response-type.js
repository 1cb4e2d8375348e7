// responseType binary gives an ArrayBuffer, none gives a null body, and
// discardResponseBodies changes the default.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const b = http.get(`${__ENV.BASE}/bytes/300`, { responseType: 'binary' });
  check(b, {
    'binary is an ArrayBuffer': (r) => r.body instanceof ArrayBuffer,
    [`binary length ${b.body.byteLength}`]: () => true,
    'binary bytes': (r) => new Uint8Array(r.body)[252] === 1,
  });
  const n = http.get(`${__ENV.BASE}/bytes/300`, { responseType: 'none' });
  check(n, { 'none has null body': (r) => r.body === null, 'none still 200': (r) => r.status === 200 });
  const t = http.get(`${__ENV.BASE}/json`, { responseType: 'text' });
  check(t, { 'text is a string': (r) => typeof r.body === 'string' });
}
