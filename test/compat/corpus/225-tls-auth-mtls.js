// tlsAuth: a target that demands a client certificate answers once one
// is offered. As in k6 the certificate is Go's pick among tlsAuth's: the
// first whose issuer the server names (client-a, listed second; its key is
// encrypted), whatever the domains say; to a server that names an issuer
// none comes from, none is offered and a TLS 1.2 server refuses the
// handshake with an alert (1010). The handshake is timed into
// http_req_tls_handshaking on a new connection only.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  iterations: 1,
  insecureSkipTLSVerify: true,
  tlsAuth: [
    { cert: __ENV.OTHER_CERT, key: __ENV.OTHER_KEY, domains: ['127.0.0.1'] },
    { cert: __ENV.CLIENT_CERT, key: __ENV.CLIENT_KEY_ENC, password: 'secret', domains: ['elsewhere.test'] },
  ],
};

export default function () {
  for (const name of ['MTLS', 'MTLS12']) {
    const first = http.get(`${__ENV[name]}/tls-client`);
    const again = http.get(`${__ENV[name]}/tls-client`);
    check(first, {
      [`${name}: ${first.status} ${first.body} ${first.tls_version} ${first.proto}`]: () => true,
      [`${name}: a new connection's handshake is timed`]: (r) => r.timings.tls_handshaking > 0,
      [`${name}: a reused one has none`]: () => again.status === 200 && again.timings.tls_handshaking === 0,
    });
  }
  const r = http.get(`${__ENV.MTLS_STRANGER}/tls-client`);
  check(r, {
    [`MTLS_STRANGER: ${r.status} ${r.error_code} ${r.error} ${r.tls_version}`]: () => true,
    'MTLS_STRANGER: the handshake failed before it was timed': (res) => res.timings.tls_handshaking === 0,
  });
}
