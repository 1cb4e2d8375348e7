// Without tlsAuth a target that demands a client certificate refuses the
// handshake. Over TLS 1.2 the refusal is always the server's alert, k6's
// 1010 "remote error: tls: handshake failure" (over TLS 1.3 the client
// finishes its side first and the alert can race the server's reset; the
// engine's tests hold that case to the outcomes TLS 1.3 allows). gRPC's
// connect fails the same way, and the options' TLS still applies.
import http from 'k6/http';
import grpc from 'k6/net/grpc';
import { check } from 'k6';

export const options = { iterations: 1, insecureSkipTLSVerify: true };

const client = new grpc.Client();
client.load(['../../../internal/testkit/grpctest/testdata'], 'hello.proto');

export default function () {
  const r = http.get(`${__ENV.MTLS12}/tls-client`);
  check(r, { [`MTLS12: ${r.status} ${r.error_code} ${r.error} ${r.timings.tls_handshaking}`]: () => true });
  let err = '';
  try {
    client.connect(__ENV.MTLS12.replace('https://', ''), { timeout: '2s' });
  } catch (e) {
    err = String(e);
  }
  check(err, { 'gRPC connect fails with the alert': (e) => e.includes('remote error: tls: handshake failure') });
}
