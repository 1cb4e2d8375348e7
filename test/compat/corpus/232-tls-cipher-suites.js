// tlsCipherSuites offers the TLS 1.0–1.2 suites listed, by k6's names,
// even one Go leaves out by default; a server of none of them refuses the
// handshake (1010). TLS 1.3's suites are not chosen by the option.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, insecureSkipTLSVerify: true, tlsCipherSuites: ['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256'] };

export default function () {
  for (const name of ['TLS12_CIPHERS', 'TLS13']) {
    const r = http.get(`${__ENV[name]}/`);
    check(r, { [`${name}: ${r.status} ${r.error_code} ${r.error} ${r.tls_version} ${name === 'TLS13' ? '' : r.tls_cipher_suite}`]: () => true });
  }
  const r = http.get(`${__ENV.TLS12_CIPHERS}/`, { throw: false });
  check(r, { 'the connection is reused': (res) => res.timings.tls_handshaking === 0 });
}
