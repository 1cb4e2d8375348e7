// k6/ws: a connection that does not open is not thrown (no throw option):
// a refused dial gives status 0 and the error, a bad handshake the server's
// answer; both sessions count in ws_sessions and ws_connecting.
// compat:args --address=
import ws from 'k6/ws';
import { check } from 'k6';

export const options = { iterations: 2, vus: 1 };

export default function () {
  const refused = ws.connect('ws://127.0.0.1:1/x', { tags: { kind: 'refused' } }, () => {});
  check(refused, {
    'refused: status 0': (r) => r.status === 0,
    'refused: error says why': (r) => r.error.includes('connection refused'),
    'refused: no url, no body': (r) => r.url === '' && r.body === '',
  });
  const plain = ws.connect(`${__ENV.BASE.replace('http://', 'ws://')}/json`, { tags: { kind: 'plain' } }, () => {});
  check(plain, {
    'bad handshake: the server status': (r) => r.status === 200,
    'bad handshake: no error': (r) => r.error === '',
    'bad handshake: its body': (r) => r.body.length > 0,
    'bad handshake: its headers': (r) => r.headers['Content-Type'] !== undefined,
  });
}
