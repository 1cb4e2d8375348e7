// Issue 37 item 8: localIPs binds a VU's WebSocket and gRPC connections
// too, as in k6 v2.2.0.
// compat:named
// compat:env K6_LOCAL_IPS=127.0.0.6,127.0.0.9
import ws from 'k6/ws';
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();
client.load(['../../../internal/testkit/grpctest/testdata'], 'hello.proto');

export const options = {
  scenarios: { each: { executor: 'per-vu-iterations', vus: 2, iterations: 1 } },
};

export default function () {
  const res = ws.connect(`${__ENV.NAMED_IP.replace('http://', 'ws://')}/ws`, {}, (socket) => socket.on('open', () => socket.close()));
  check(res, { [`vu ${__VU} ws from ${res.headers['X-Peer']}`]: (r) => r.status === 101 });
  client.connect(__ENV.NAMED_IP.replace('http://', ''), { plaintext: true });
  const g = client.invoke('metronome.test.Greeter/SayHello', { name: 'local' });
  check(g, { [`vu ${__VU} grpc from ${g.headers['x-peer']}`]: (r) => r.status === grpc.StatusOK });
  client.close();
}
