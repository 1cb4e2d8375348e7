// Issue 37, bug 3: k6/websockets, timers and a group cut off by the hard
// stop. k6 v2.2.0 keeps what came before the stop (the session's open
// and its message), runs no close handler and no timer after it, records
// no group duration for the group the stop cut, and counts no iteration.
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import { WebSocket } from 'k6/websockets';
import { setTimeout } from 'k6/timers';
import { check, group, sleep } from 'k6';
import { Counter } from 'k6/metrics';

const after = new Counter('after_stop');

export const options = {
  scenarios: { cut: { executor: 'per-vu-iterations', vus: 3, iterations: 1, maxDuration: '1s', gracefulStop: '0s' } },
};

export default async function () {
  switch (__VU) {
    case 1: {
      const ws = new WebSocket(`${__ENV.BASE.replace('http://', 'ws://')}/ws`);
      ws.onopen = () => ws.send('hi');
      ws.onmessage = () => after.add(1);
      ws.onclose = () => {
        check(true, { 'close after the stop': (x) => x });
        after.add(10);
      };
      break;
    }
    case 2:
      setTimeout(() => {
        check(true, { 'timer after the stop': (x) => x });
        after.add(10);
      }, 3000);
      await new Promise((resolve) => setTimeout(resolve, 4000));
      after.add(100);
      break;
    case 3:
      group('cut', () => {
        check(true, { 'in the group': (x) => x });
        sleep(3);
        after.add(1000);
      });
      break;
  }
}
