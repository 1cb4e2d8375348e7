// --http-debug=full for k6/net/grpc, as k6 writes it: per call, reflection's
// included, "Out Header:" (method, remote address, metadata), "Out
// Payload:" and "In Payload:" (wire length, time, the message as protobuf
// text), "In Header:" and "In Trailer:" when they hold metadata, at level
// info with source=http-debug only. The suite sorts the metadata lines,
// which both write in a map's order, and hides the times and grpc-go's
// version in the User-Agent.
// compat:args --http-debug=full
// compat:log
import grpc from 'k6/net/grpc';

const client = new grpc.Client();

export const options = { iterations: 1 };

export default function () {
  client.connect(__ENV.BASE.replace('http://', ''), { plaintext: true, reflect: true });
  client.invoke('metronome.test.Greeter/SayHello', { name: 'bob', count: 2 }, { metadata: { 'x-name': 'md' } });
  client.invoke('metronome.test.Greeter/Fail', { name: 'zed' });
  client.close();
}
