// k6/net/grpc: client.close() in one stream's end handler while the server
// holds back the end of another stream of the same client. k6 cuts the
// held stream off: its error handler gets code 2 "canceled by client (k6)",
// its end handler runs, and its grpc_req_duration is kept with status 1.
// Handlers get k6's metadata {ts} second, and end an empty object first.
// compat:args --address=
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();

export const options = { scenarios: { close: { executor: 'per-vu-iterations', vus: 2, iterations: 2 } } };

export default function () {
  client.connect(__ENV.BASE.replace('http://', ''), { plaintext: true, reflect: true });
  const events = [];
  // The server ends this stream only when the client gives it up.
  const held = new grpc.Stream(client, 'metronome.test.Greeter/Chat', { tags: { kind: 'held' } });
  held.on('data', (m, meta) => {
    // The server has the held stream by now: it answered it.
    events.push('held data');
    check(meta, { 'data metadata: ts in seconds': (v) => typeof v.ts === 'number' && Math.abs(v.ts - Date.now() / 1000) < 60 });
    const quick = new grpc.Stream(client, 'metronome.test.Greeter/Repeat', { tags: { kind: 'quick' } });
    quick.on('data', () => events.push('quick data'));
    quick.on('end', (x, meta) => {
      events.push('quick end');
      check(x, { 'end: an empty object': (v) => JSON.stringify(v) === '{}' && typeof meta.ts === 'number' });
      client.close();
    });
    quick.write({ name: 'q', count: 1 });
    quick.end();
  });
  held.on('error', (e, meta) => {
    events.push('held error');
    check(meta, { 'error metadata: ts': (v) => typeof v.ts === 'number' });
    check(e, {
      'cut-off stream: code 2 (Unknown)': (v) => v.code === grpc.StatusUnknown,
      'cut-off stream: k6 message': (v) => v.message === 'canceled by client (k6)',
    });
  });
  held.on('end', () => {
    events.push('held end');
    check(events, { 'events in order': (ev) => ev.join('|') === 'held data|quick data|quick end|held error|held end' });
  });
  held.write({ name: 'hold' });
  held.end();
}
