// jslib.k6.io/totp: codes of a fixed secret at a fixed time step (the
// offset argument pins the step whatever the clock says), with 6 and 8
// digits, and verify.
import * as lib from '{{BASE}}/index.js';

const secret = 'JBSWY3DPEHPK3PXP';

async function probe() {
  // gen(period, offset) uses the step floor((now/1000 - offset) / period):
  // an offset of now/1000 - 1775 makes it step 59 of 30 s.
  const offset = () => Date.now() / 1000 - 1775;
  const six = new lib.TOTP(secret);
  const eight = new lib.TOTP(secret, 8);
  return {
    names: names(lib),
    fields: [six.key, six.digits, eight.digits],
    six: await attemptAsync(() => six.gen(30, offset())),
    eight: await attemptAsync(() => eight.gen(30, offset())),
    now: await attemptAsync(async () => /^\d{6}$/.test(await six.gen())),
    verify: await attemptAsync(async () => [await six.verify(await six.gen()), await six.verify('000000x')]),
  };
}
