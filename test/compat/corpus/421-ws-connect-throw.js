// k6/ws with the throw option: a refused dial and a bad handshake throw
// Go's error text, as k6 words them.
// compat:args --address=
import ws from 'k6/ws';
import { check } from 'k6';

export const options = { iterations: 1, vus: 1, throw: true };

function thrown(url) {
  try {
    ws.connect(url, () => {});
    return 'nothing';
  } catch (e) {
    return String(e);
  }
}

export default function () {
  check(thrown('ws://127.0.0.1:1/x'), { 'refused thrown': (e) => e.startsWith('GoError: dial tcp 127.0.0.1:1: connect: connection refused') });
  check(thrown(`${__ENV.BASE.replace('http://', 'ws://')}/json`), { 'bad handshake thrown': (e) => e === 'GoError: websocket: bad handshake' });
}
