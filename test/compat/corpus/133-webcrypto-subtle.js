// Issue #9: crypto.subtle digest, HMAC sign/verify and AES-GCM
// encrypt/decrypt round trips.
import { check } from 'k6';

export const options = { iterations: 1 };

function bytes(s) {
  return new Uint8Array(Array.from(s).map((c) => c.charCodeAt(0)));
}

function hex(buf) {
  return Array.from(new Uint8Array(buf)).map((b) => b.toString(16).padStart(2, '0')).join('');
}

export default async function () {
  const data = bytes('metronome');
  const digest = await crypto.subtle.digest('SHA-256', data);
  const hkey = await crypto.subtle.generateKey({ name: 'HMAC', hash: { name: 'SHA-256' } }, true, ['sign', 'verify']);
  const sig = await crypto.subtle.sign('HMAC', hkey, data);
  const ok = await crypto.subtle.verify('HMAC', hkey, sig, data);
  const akey = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, akey, data);
  const pt = await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, akey, ct);
  check(null, {
    [`sha-256 ${hex(digest)}`]: () => true,
    'hmac verifies': () => ok === true,
    'aes-gcm round trip': () => String.fromCharCode(...new Uint8Array(pt)) === 'metronome',
  });
}
