// Under HTTP_PROXY/HTTPS_PROXY a script with hosts runs, as in k6: the
// proxy (a loopback one that maps every name to this suite's servers)
// resolves and reaches the hosts of the HTTP and WebSocket requests it
// carries, so hosts does not apply to them; loopback URLs and NO_PROXY
// names go direct, where hosts applies, and gRPC uses no proxy.
// compat:env HTTP_PROXY=${PROXY} HTTPS_PROXY=${PROXY} NO_PROXY=direct.test no_proxy=
// compat:args --address=
import http from 'k6/http';
import ws from 'k6/ws';
import grpc from 'k6/net/grpc';
import { check } from 'k6';

// Both names go to the suite's server (port included) where hosts
// applies; URLs on port 80 keep the tags the same on every run.
const base = __ENV.BASE.replace('http://', '');

export const options = {
  iterations: 1,
  insecureSkipTLSVerify: true,
  hosts: { 'target.test': base, 'direct.test': base },
};

const client = new grpc.Client();
client.load(['../../../internal/testkit/grpctest/testdata'], 'hello.proto');

function via(r) {
  return r.status === 200 ? JSON.parse(r.body).headers['X-Proxied-Host'] || 'direct' : `${r.error_code} ${r.error}`;
}

export default function () {
  for (const url of ['http://target.test/headers', 'http://direct.test/headers', `${__ENV.BASE}/headers`]) {
    const r = http.get(url);
    check(r, { [`${url.replace(__ENV.BASE, 'BASE')}: ${r.status} via ${via(r)}`]: () => true });
  }
  const s = http.get('https://target.test/');
  check(s, { [`https through the proxy: ${s.status} ${String(s.body).trim()}`]: () => true });
  const res = ws.connect('ws://target.test/ws', {}, (socket) => {
    socket.on('open', () => socket.send('proxied'));
    socket.on('message', () => socket.close());
  });
  check(res, { 'k6/ws through the proxy': (r) => r && r.status === 101 });
  client.connect('target.test:80', { plaintext: true, timeout: '5s' });
  const g = client.invoke('metronome.test.Greeter/SayHello', { name: 'pinned' });
  check(g, { 'gRPC goes direct, where hosts applies': (v) => v.message.message === 'hello pinned' });
  client.close();
}
