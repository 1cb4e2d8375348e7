// The VU's dialer honours blacklistIPs (BLACKLIST=on), also as an
// AddrResolver, counts its bytes into data_sent and data_received, and the
// extension reads metronome's process environment, not __ENV.
import { dial, exchange, resolve, greet } from 'k6/x/probe';
import { sayHello, version, max_retries } from 'k6/x/probev1';

export const options = { blacklistIPs: __ENV.BLACKLIST === 'on' ? ['127.0.0.0/8'] : [] };

export default function () {
  console.log(dial(__ENV.ADDR));
  console.log(exchange(__ENV.ADDR, 'ping!'));
  console.log(resolve('127.0.0.1'));
  console.log(greet('env'));
  console.log(sayHello('v1'), version, max_retries);
}
