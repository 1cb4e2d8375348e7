// Issue 37 item 8: WebSocket and gRPC connections go through the same
// resolver as HTTP, and share its round-robin turn, as in k6 v2.2.0: the
// server tells each connection which of its addresses it reached.
// compat:etc-hosts
import ws from 'k6/ws';
import grpc from 'k6/net/grpc';
import http from 'k6/http';
import { check } from 'k6';

// Check names may not hold '::' (k6's group separator): ::1 is shown as __1.
const ip = (a) => String(a).replace(/:/g, '_');

const client = new grpc.Client();
client.load(['../../../internal/testkit/grpctest/testdata'], 'hello.proto');

export const options = { iterations: 1, noConnectionReuse: true, dns: { select: 'roundRobin' } };

export default function () {
  for (let i = 0; i < 2; i++) {
    const res = ws.connect(`${__ENV.MULTI.replace('http://', 'ws://')}/ws`, {}, (socket) => socket.on('open', () => socket.close()));
    check(res, { [`ws #${i} reached ${ip(res.headers['X-Local'])}`]: (r) => r.status === 101 });
  }
  for (let i = 0; i < 2; i++) {
    client.connect(__ENV.MULTI.replace('http://', ''), { plaintext: true });
    const res = client.invoke('metronome.test.Greeter/SayHello', { name: 'dns' });
    check(res, { [`grpc #${i} reached ${ip(res.headers['x-local'])}`]: (r) => r.status === grpc.StatusOK });
    client.close();
  }
  const res = http.get(`${__ENV.MULTI}/`);
  check(res, { [`http reached ${ip(res.remote_ip)}`]: (r) => r.status === 200 });
}
