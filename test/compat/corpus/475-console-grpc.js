// console.log of k6/net/grpc's answers: a status is a Go value, written
// as its methods; a message, an error and metadata as objects.
// compat:args --address=
// compat:console
import grpc from 'k6/net/grpc';

const client = new grpc.Client();

export const options = { iterations: 1 };

export default function () {
  client.connect(__ENV.BASE.replace('http://', ''), { plaintext: true, reflect: true });
  const r = client.invoke('metronome.test.Greeter/SayHello', { name: 'bob', count: 2 }, { metadata: { 'x-name': 'md' } });
  console.log('ok', r.status, r.message, r.error, r.headers['x-echo'], r.trailers['x-trailer']);
  const f = client.invoke('metronome.test.Greeter/Fail', { name: 'zed' });
  console.log('fail', f.status, f.message, f.error);
  console.log('status', grpc.StatusOK, grpc.StatusNotFound);
  client.close();
}
