// crypto.subtle: HMAC and ECDSA P-256 sign/verify round trips, and a
// tampered message failing verification.
import { check } from 'k6';

export const options = { iterations: 1 };

export default async function () {
  const msg = new TextEncoder().encode('metronome');
  const bad = new TextEncoder().encode('metronomE');
  const hmac = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify']);
  const mac = await crypto.subtle.sign('HMAC', hmac, msg);
  const ec = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const alg = { name: 'ECDSA', hash: 'SHA-256' };
  const sig = await crypto.subtle.sign(alg, ec.privateKey, msg);
  const raw = await crypto.subtle.exportKey('raw', hmac);
  check(null, {
    [`hmac ${mac.byteLength} bytes, key ${raw.byteLength} bytes`]: () => true,
    [`hmac verify ${await crypto.subtle.verify('HMAC', hmac, mac, msg)} tampered ${await crypto.subtle.verify('HMAC', hmac, mac, bad)}`]: () => true,
    [`ecdsa ${sig.byteLength} bytes`]: () => true,
    [`ecdsa verify ${await crypto.subtle.verify(alg, ec.publicKey, sig, msg)} tampered ${await crypto.subtle.verify(alg, ec.publicKey, sig, bad)}`]: () => true,
    [`key types ${ec.privateKey.type} ${ec.publicKey.type} ${hmac.algorithm.name}`]: () => true,
  });
}
