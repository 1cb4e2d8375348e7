// k6/net/grpc: a connect to a closed port and an invoke without a
// connection throw GoErrors in grpc-go's and k6's words.
import grpc from 'k6/net/grpc';
import { check } from 'k6';

export const options = { iterations: 1, vus: 1 };
const client = new grpc.Client();

function thrown(fn) {
  try {
    fn();
    return null;
  } catch (e) {
    return e;
  }
}

export default function () {
  const refused = thrown(() => client.connect('127.0.0.1:1', { plaintext: true, timeout: '2s' }));
  check(refused, {
    'connect: a GoError': (e) => e !== null && e.name === 'GoError',
    'connect: grpc-go words': (e) => String(e) === 'GoError: connection error: desc = "transport: error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"',
  });
  const unconnected = thrown(() => client.invoke('x.Y/Z', {}));
  check(unconnected, { 'invoke: needs connect': (e) => String(e) === 'GoError: no gRPC connection, you must call connect first' });
}
