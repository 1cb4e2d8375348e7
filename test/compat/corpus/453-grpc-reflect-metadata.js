// k6/net/grpc: connect's reflectMetadata goes with the reflection request.
// The suite's server refuses reflection whose x-reflect-token is not
// "secret"; a refused reflection throws k6's GoError.
// compat:args --address=
import grpc from 'k6/net/grpc';
import { check } from 'k6';

const good = new grpc.Client();
const bad = new grpc.Client();

export const options = { iterations: 2 };

export default function () {
  const addr = __ENV.BASE.replace('http://', '');
  good.connect(addr, { plaintext: true, reflect: true, reflectMetadata: { 'X-Reflect-Token': 'secret' } });
  const r = good.invoke('metronome.test.Greeter/SayHello', { name: 'r' });
  check(r, { 'reflected with metadata': (v) => v.status === grpc.StatusOK && v.message.message === 'hello r' });
  good.close();
  let err = null;
  try {
    bad.connect(addr, { plaintext: true, reflect: true, reflectMetadata: { 'x-reflect-token': 'wrong' } });
  } catch (e) {
    err = e;
  }
  check(err, {
    'refused reflection throws': (e) => e !== null && e.name === 'GoError',
    "refused reflection: k6's words": (e) => e !== null &&
      e.message === "can't list services: rpc error: code = PermissionDenied desc = wrong x-reflect-token",
  });
}
