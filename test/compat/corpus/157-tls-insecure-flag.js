// --insecure-skip-tls-verify, the flag form.
// compat:args --insecure-skip-tls-verify
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(http.get(`${__ENV.TLS_BASE}/`), { 'secure body': (x) => x.body === 'secure\n' });
}
