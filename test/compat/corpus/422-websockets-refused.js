// k6/websockets: a refused connection fires error, then close without a
// code, and the session counts in ws_sessions and ws_connecting.
// compat:args --address=
import { WebSocket } from 'k6/websockets';
import { check } from 'k6';

export const options = { iterations: 1, vus: 1 };

export default function () {
  const events = [];
  const s = new WebSocket('ws://127.0.0.1:1/x');
  s.onopen = () => events.push('open');
  s.onerror = (e) => events.push('error:' + e.error.includes('connection refused'));
  s.onclose = (e) => {
    events.push('close:' + e.code + ':' + JSON.stringify(e.reason));
    check(events, { 'error then close': (ev) => ev.join(',') === 'error:true,close:undefined:""' });
    check(s, { 'closed': (x) => x.readyState === 3 });
  };
}
