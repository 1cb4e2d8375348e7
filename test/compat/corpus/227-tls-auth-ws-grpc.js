// tlsAuth's certificate is offered to WebSocket (k6/ws, k6/websockets)
// and gRPC servers too: an mTLS target answers all three, and gRPC's
// client.healthCheck() reports grpc.health.v1's statuses with k6's
// constants and shape, timed into grpc_req_duration.
// compat:args --address=
import ws from 'k6/ws';
import { WebSocket } from 'k6/websockets';
import grpc from 'k6/net/grpc';
import { check } from 'k6';

export const options = {
  iterations: 1,
  insecureSkipTLSVerify: true,
  tlsAuth: [{ cert: __ENV.CLIENT_CERT, key: __ENV.CLIENT_KEY }],
};

const client = new grpc.Client();
client.load(['../../../internal/testkit/grpctest/testdata'], 'hello.proto');

export default function () {
  const url = `${__ENV.MTLS.replace('https://', 'wss://')}/ws`;
  const res = ws.connect(url, {}, (socket) => {
    socket.on('open', () => socket.send('over mTLS'));
    socket.on('message', (m) => {
      check(m, { 'k6/ws echo over mTLS': (v) => v === 'over mTLS' });
      socket.close();
    });
  });
  check(res, { 'k6/ws status 101': (r) => r && r.status === 101 });

  const w = new WebSocket(url);
  w.onopen = () => w.send('websockets over mTLS');
  w.onmessage = (m) => {
    check(m, { 'k6/websockets echo over mTLS': (e) => e.data === 'websockets over mTLS' });
    w.close();
  };

  client.connect(__ENV.MTLS.replace('https://', ''), { timeout: '5s' });
  const r = client.invoke('metronome.test.Greeter/SayHello', { name: 'mtls' });
  check(r, { 'gRPC call over mTLS': (v) => v.status === grpc.StatusOK && v.message.message === 'hello mtls' });
  const all = client.healthCheck();
  const greeter = client.healthCheck('metronome.test.Greeter');
  const down = client.healthCheck('down');
  check(all, {
    [`healthCheck(): ${JSON.stringify(all)} ${String(all.status)} ${Object.keys(all)}`]: () => true,
    'SERVING is grpc.HealthCheckServing': (h) => h.status === grpc.HealthCheckServing && h.status == 1,
    'a service SERVING': () => greeter.status === grpc.HealthCheckServing,
    'a service NOT_SERVING': () => down.status === grpc.HealthCheckNotServing && String(down.status) === 'NOT_SERVING',
    [`constants ${[grpc.HealthCheckUnknown, grpc.HealthCheckServing, grpc.HealthCheckNotServing, grpc.HealthCheckServiceUnkown].map(Number)}`]: () => true,
  });
  try {
    client.healthCheck('no-such-service');
  } catch (e) {
    check(null, { 'an unknown service throws NotFound': () => String(e).includes('rpc error: code = NotFound desc = unknown service') });
  }
  client.close();
}
