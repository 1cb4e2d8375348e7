// A tlsVersion range that holds no version is not refused at start, in
// k6 as here; every TLS request fails (1000) while plain HTTP works.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, insecureSkipTLSVerify: true, tlsVersion: { min: 'tls1.3', max: 'tls1.2' } };

export default function () {
  for (const name of ['BASE', 'TLS13', 'TLS12_CIPHERS']) {
    const r = http.get(`${__ENV[name]}/`);
    check(r, { [`${name}: ${r.status} ${r.error_code} ${r.error}`]: () => true });
  }
}
