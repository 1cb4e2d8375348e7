// tlsVersion as one name allows that version only: a TLS 1.3 server
// refuses the handshake with an alert (1010), a TLS 1.2 one answers. The
// suite negotiated with the TLS 1.2 server is the one suite of its list
// Go offers by default, which k6 names without Go's _SHA256.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, insecureSkipTLSVerify: true, tlsVersion: 'tls1.2' };

export default function () {
  for (const name of ['TLS13', 'TLS12_CIPHERS']) {
    const r = http.get(`${__ENV[name]}/`);
    check(r, { [`${name}: ${r.status} ${r.error_code} ${r.error} ${r.tls_version} ${r.tls_cipher_suite} ${r.proto}`]: () => true });
  }
}
