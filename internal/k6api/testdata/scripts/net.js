// The VU's dialer honours blacklistIPs (BLACKLIST=on), also as an
// AddrResolver, and the
// extension reads metronome's process environment, not __ENV.
import { dial, resolve, greet } from 'k6/x/probe';
import { sayHello, version, max_retries } from 'k6/x/probev1';

export const options = { blacklistIPs: __ENV.BLACKLIST === 'on' ? ['127.0.0.0/8'] : [] };

export default function () {
  console.log(dial(__ENV.ADDR));
  console.log(resolve('127.0.0.1'));
  console.log(greet('env'));
  console.log(sayHello('v1'), version, max_retries);
}
