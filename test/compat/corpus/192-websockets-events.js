// k6/websockets: addEventListener, text and binary send, binaryType
// arraybuffer, close from the client.
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import { WebSocket } from 'k6/websockets';
import { check } from 'k6';

export const options = { scenarios: { ev: { executor: 'per-vu-iterations', vus: 2, iterations: 2 } } };

export default function () {
  const ws = new WebSocket(`${__ENV.BASE.replace('http://', 'ws://')}/ws`, null, { tags: { kind: 'events' } });
  ws.binaryType = 'arraybuffer';
  let got = 0;
  ws.addEventListener('open', () => {
    ws.send('hello');
    ws.send(new Uint8Array([1, 2, 3, 4]).buffer);
  });
  ws.addEventListener('message', (e) => {
    got++;
    if (typeof e.data === 'string') {
      check(e, { 'text echo': (ev) => ev.data === 'hello' });
    } else {
      check(e, { 'binary echo': (ev) => ev.data.byteLength === 4 && new Uint8Array(ev.data)[3] === 4 });
    }
    if (got === 2) ws.close();
  });
  ws.addEventListener('close', () => {
    check(got, { 'two messages before close': (n) => n === 2 });
  });
}
