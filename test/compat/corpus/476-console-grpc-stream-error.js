// console.log of a k6/net/grpc stream's error: k6 v2.2.0 hands the
// handler a Go error value.
// compat:args --address=
// compat:console
import grpc from 'k6/net/grpc';

const client = new grpc.Client();

export const options = { iterations: 1 };

export default function () {
  client.connect(__ENV.BASE.replace('http://', ''), { plaintext: true, reflect: true });
  const s = new grpc.Stream(client, 'metronome.test.Greeter/Chat');
  s.on('error', (e) => console.log('error', e, Number(e.code), e.message, String(e)));
  s.on('end', () => { console.log('end'); client.close(); });
  s.write({ name: 'fail' });
  s.end();
}
