// k6/experimental/websockets: the same API under its old name, with
// onopen/onmessage handlers, a ping and a server-initiated close, and k6
// v2.2.0's warning that the name is deprecated (issue 37).
// compat:messages
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import { WebSocket } from 'k6/experimental/websockets';
import { check } from 'k6';

export const options = { scenarios: { exp: { executor: 'shared-iterations', vus: 1, iterations: 3 } } };

export default function () {
  const ws = new WebSocket(`${__ENV.BASE.replace('http://', 'ws://')}/ws`);
  let pongs = 0;
  ws.onopen = () => {
    ws.ping();
  };
  ws.onpong = () => {
    pongs++;
    ws.send('close-me');
  };
  ws.onclose = () => {
    check(pongs, { 'one pong': (n) => n === 1 });
  };
}
