// The VU's dialer honours blacklistIPs (BLACKLIST=on), also as an
// AddrResolver, shows the blocked names to an extension that takes it as
// k6's *netext.Dialer, counts its bytes into data_sent and data_received, and the
// extension reads metronome's process environment, not __ENV.
import { dial, exchange, resolve, fence, greet } from 'k6/x/probe';
import { sayHello, version, max_retries } from 'k6/x/probev1';

export const options = {
  blacklistIPs: __ENV.BLACKLIST === 'on' ? ['127.0.0.0/8'] : [],
  blockHostnames: ['*.blocked.test', '*ocked.test', 'Exact.test'],
};

export default function () {
  console.log(dial(__ENV.ADDR));
  console.log(exchange(__ENV.ADDR, 'ping!'));
  console.log(resolve('127.0.0.1'));
  for (const host of ['A.Blocked.test', 'blocked.test', 'exact.test', 'open.test']) console.log(fence(host));
  console.log(greet('env'));
  console.log(sayHello('v1'), version, max_retries);
}
