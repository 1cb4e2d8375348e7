// k6/ws: connect with tags and a header, send text, count the echoes, close.
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import ws from 'k6/ws';
import { check } from 'k6';

export const options = { scenarios: { echo: { executor: 'per-vu-iterations', vus: 2, iterations: 2 } } };

export default function () {
  const url = `${__ENV.BASE.replace('http://', 'ws://')}/ws`;
  let echoes = 0;
  const res = ws.connect(url, { tags: { kind: 'echo' }, headers: { 'X-Who': 'compat' } }, function (socket) {
    socket.on('open', () => {
      socket.send('one');
      socket.send('two');
    });
    socket.on('message', (m) => {
      echoes++;
      check(m, { 'echo is sent text': (v) => v === 'one' || v === 'two' });
      if (echoes === 2) socket.close();
    });
    socket.setTimeout(() => socket.close(), 5000);
  });
  check(res, { 'status is 101': (r) => r && r.status === 101, 'X-Echo header': (r) => r.headers['X-Echo'] === 'yes' });
  check(echoes, { 'two echoes': (n) => n === 2 });
}
