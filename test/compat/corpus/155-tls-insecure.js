// insecureSkipTLSVerify reaches a self-signed HTTPS server: tls_version
// tag, TLS handshake time.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, insecureSkipTLSVerify: true };

export default function () {
  const r = http.get(`${__ENV.TLS_BASE}/`);
  check(r, { 'secure body': (x) => x.body === 'secure\n', [`proto ${r.proto}`]: () => true, 'handshake timed': (x) => x.timings.tls_handshaking > 0 });
}
