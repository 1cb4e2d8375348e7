// k6/net/grpc: a client using server reflection, a server-streaming call
// and a bidirectional grpc.Stream.
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();

export const options = { scenarios: { stream: { executor: 'per-vu-iterations', vus: 2, iterations: 1 } } };

export default function () {
  client.connect(__ENV.BASE.replace('http://', ''), { plaintext: true, reflect: true });
  const res = client.invoke('metronome.test.Greeter/SayHello', { name: 'reflect' });
  check(res, { 'reflected call OK': (r) => r && r.status === grpc.StatusOK && r.message.message === 'hello reflect' });

  const repeat = new grpc.Stream(client, 'metronome.test.Greeter/Repeat');
  const seen = [];
  repeat.on('data', (m) => seen.push(m.message));
  repeat.on('end', () => {
    check(seen, { 'three streamed replies': (s) => s.join('|') === 'r 0|r 1|r 2' });
  });
  repeat.write({ name: 'r', count: 3 });
  repeat.end();

  const chat = new grpc.Stream(client, 'metronome.test.Greeter/Chat', { tags: { kind: 'chat' } });
  let replies = 0;
  chat.on('data', (m) => {
    replies++;
    check(m, { 'chat reply': (v) => v.message === `hello c${replies}` && v.count === replies });
  });
  chat.on('end', () => {
    check(replies, { 'two chat replies': (n) => n === 2 });
  });
  chat.write({ name: 'c1' });
  chat.write({ name: 'c2' });
  chat.end();
}
