// Issue 37, bug 3: a ws.connect that blocks until the hard stop returns
// because the VU is stopping; what the script records after it (a check,
// a custom metric, a group) is dropped, and the iteration counts as
// interrupted, not in iterations. k6 v2.2.0 keeps ws_sessions,
// ws_connecting and the messages of the open session, no
// ws_session_duration, and one data_sent and data_received per iteration.
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import ws from 'k6/ws';
import { check, group } from 'k6';
import { Counter } from 'k6/metrics';

const after = new Counter('after_stop');

export const options = { scenarios: { cut: { executor: 'constant-vus', vus: 20, duration: '1s', gracefulStop: '0s' } } };

export default function () {
  const res = ws.connect(`${__ENV.BASE.replace('http://', 'ws://')}/ws`, {}, (socket) => {
    socket.on('open', () => socket.send('hi'));
  });
  check(res, { 'after the stop': (r) => r.status === 101 });
  after.add(1);
  group('after', () => after.add(1));
}
