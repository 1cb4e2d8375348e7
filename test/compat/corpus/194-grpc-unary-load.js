// k6/net/grpc: unary calls with a .proto from load(), metadata, tags, a
// failing call's status.
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();
client.load(['../../../internal/testkit/grpctest/testdata'], 'hello.proto');

export const options = { scenarios: { unary: { executor: 'per-vu-iterations', vus: 2, iterations: 2 } } };

export default function () {
  client.connect(__ENV.BASE.replace('http://', ''), { plaintext: true });
  const res = client.invoke('metronome.test.Greeter/SayHello', { name: 'k6', count: 2 },
    { metadata: { 'x-name': 'compat' }, tags: { kind: 'unary' } });
  check(res, {
    'status OK': (r) => r && r.status === grpc.StatusOK,
    'message': (r) => r && r.message.message === 'hello k6' && r.message.count === 3,
    'header echo': (r) => r && r.headers['x-echo'][0] === 'compat',
    'trailer': (r) => r && r.trailers['x-trailer'][0] === 'done',
  });
  const bad = client.invoke('metronome.test.Greeter/Fail', { name: 'nobody' });
  check(bad, {
    'status NotFound': (r) => r && r.status === grpc.StatusNotFound,
    'error message': (r) => r && r.error && r.error.message === 'no nobody',
  });
  client.close();
}
