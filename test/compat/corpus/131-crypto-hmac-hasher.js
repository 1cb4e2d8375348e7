// Issue #9: k6/crypto hmac, createHash and createHMAC with update/digest,
// randomBytes.
import crypto from 'k6/crypto';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const h = crypto.createHash('sha1');
  h.update('metro');
  h.update('nome');
  const m = crypto.createHMAC('sha256', 'key');
  m.update('payload');
  const rb = crypto.randomBytes(16);
  check(null, {
    [`hmac sha256 ${crypto.hmac('sha256', 'key', 'payload', 'hex')}`]: () => true,
    [`hmac md5 base64 ${crypto.hmac('md5', 'key', 'payload', 'base64')}`]: () => true,
    [`createHash ${h.digest('hex')}`]: () => true,
    [`createHMAC ${m.digest('base64rawurl')}`]: () => true,
    'randomBytes length': () => rb.byteLength === 16,
  });
}
