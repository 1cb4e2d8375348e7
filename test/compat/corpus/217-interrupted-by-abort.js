// Issue 37, bug 3: exec.test.abort() stops the test while another VU
// waits in ws.connect; that VU's check and custom metric after the
// connect returns are dropped, as k6 v2.2.0 drops them.
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import ws from 'k6/ws';
import exec from 'k6/execution';
import { check, sleep } from 'k6';
import { Counter } from 'k6/metrics';

const after = new Counter('after_stop');

export const options = { scenarios: { cut: { executor: 'per-vu-iterations', vus: 2, iterations: 1, maxDuration: '10s' } } };

export default function () {
  if (__VU === 1) {
    sleep(0.5);
    check(true, { 'before the abort': (x) => x });
    exec.test.abort('enough');
  }
  ws.connect(`${__ENV.BASE.replace('http://', 'ws://')}/ws`, {}, (socket) => {
    socket.on('open', () => socket.send('hi'));
  });
  check(true, { 'after the abort': (x) => x });
  after.add(1);
}
