// A k6/websockets URL without ws:// or wss:// (none, a host and port, a
// protocol-relative one, http://) or with a fragment makes the WebSocket
// constructor throw k6's GoError, and no session is counted.
import { WebSocket } from 'k6/websockets';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const host = __ENV.BASE.replace('http://', '');
  for (const u of [undefined, host + '/ws', '//' + host + '/ws', __ENV.BASE + '/ws', __ENV.BASE.replace('http://', 'ws://') + '/ws#f']) {
    let threw = '';
    try {
      const w = new WebSocket(u);
      w.onerror = () => {};
    } catch (e) {
      threw = String(e).split(':')[0];
    }
    check(threw, { 'the constructor threw a GoError': (x) => x === 'GoError' });
  }
}
