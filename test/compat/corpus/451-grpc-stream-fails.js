// k6/net/grpc: a stream the server ends with an error status runs the
// error handler, then the end handler, and keeps its grpc_req_duration
// with the server's status (5, NOT_FOUND), as in k6.
// compat:args --address=
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();

export const options = { iterations: 2 };

export default function () {
  client.connect(__ENV.BASE.replace('http://', ''), { plaintext: true, reflect: true });
  const events = [];
  const s = new grpc.Stream(client, 'metronome.test.Greeter/Chat');
  s.on('data', () => events.push('data'));
  s.on('error', (e) => {
    events.push('error');
    check(e, { 'server status': (v) => v.code === grpc.StatusNotFound && v.message === 'no fail' });
  });
  s.on('end', () => {
    events.push('end');
    check(events, { 'error, then end': (ev) => ev.join('|') === 'error|end' });
  });
  s.write({ name: 'fail' });
  s.end();
}
