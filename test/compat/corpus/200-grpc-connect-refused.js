// Issue 25: client.connect() to a port where nothing listens fails at
// once, as in k6, instead of retrying until its timeout; the script goes on.
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();
client.load(['../../../internal/testkit/grpctest/testdata'], 'hello.proto');

export const options = { iterations: 2 };

export default function () {
  const t0 = Date.now();
  let err = '';
  try {
    client.connect('127.0.0.1:1', { plaintext: true, timeout: '10s' });
  } catch (e) {
    err = String(e);
  }
  check(err, {
    'connect failed': (e) => e !== '',
    'the error says the connection was refused': (e) => e.includes('connect: connection refused'),
    'it failed long before its timeout': () => Date.now() - t0 < 5000,
  });
  client.connect('127.0.0.1:1', { plaintext: true, timeout: '10s' }); // throws: the iteration ends here
  check(null, { 'not reached': () => true });
}
