// tlsVersion as {min, max}: at least TLS 1.3 reaches the TLS 1.3 server
// and is refused by the TLS 1.2 one with an alert (1010).
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, insecureSkipTLSVerify: true, tlsVersion: { min: 'tls1.3', max: 'tls1.3' } };

export default function () {
  for (const name of ['TLS13', 'TLS12_CIPHERS']) {
    const r = http.get(`${__ENV[name]}/`);
    check(r, { [`${name}: ${r.status} ${r.error_code} ${r.error} ${r.tls_version}`]: () => true });
  }
}
