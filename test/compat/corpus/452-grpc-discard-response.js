// k6/net/grpc: params.discardResponseMessage. The response's message is
// null while status, headers, trailers and error stay; a stream's data
// handlers get an empty object; durations are recorded as usual.
// compat:args --address=
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const client = new grpc.Client();

export const options = { iterations: 2 };

export default async function () {
  client.connect(__ENV.BASE.replace('http://', ''), { plaintext: true, reflect: true });
  const r = client.invoke('metronome.test.Greeter/SayHello', { name: 'd' },
    { discardResponseMessage: true, metadata: { 'x-name': 'md' }, tags: { kind: 'discarded' } });
  check(r, {
    'discarded: message null': (v) => v.message === null,
    'discarded: status OK': (v) => v.status === grpc.StatusOK && v.error === null,
    'discarded: headers and trailers kept': (v) => v.headers['x-echo'][0] === 'md' && v.trailers['x-trailer'][0] === 'done',
  });
  const f = client.invoke('metronome.test.Greeter/Fail', { name: 'd' }, { discardResponseMessage: true });
  check(f, { 'failed: message null, error kept': (v) => v.message === null && v.status === grpc.StatusNotFound && v.error.message === 'no d' });
  const a = await client.asyncInvoke('metronome.test.Greeter/SayHello', { name: 'a' }, { discardResponseMessage: true });
  check(a, { 'async: message null': (v) => v.message === null && v.status === grpc.StatusOK });
  const n = client.invoke('metronome.test.Greeter/SayHello', { name: 'n' }, { discardResponseMessage: false });
  check(n, { 'false: message kept': (v) => v.message.message === 'hello n' });
  const s = new grpc.Stream(client, 'metronome.test.Greeter/Repeat', { discardResponseMessage: true, tags: { kind: 'stream' } });
  const seen = [];
  s.on('data', (m) => seen.push(JSON.stringify(m)));
  s.on('end', () => check(seen, { 'stream: empty objects': (v) => v.join('|') === '{}|{}' }));
  s.write({ name: 'r', count: 2 });
  s.end();
}
