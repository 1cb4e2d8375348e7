// Issue #9: k6/crypto hash functions and output encodings.
import crypto from 'k6/crypto';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const checks = {};
  for (const alg of ['md4', 'md5', 'sha1', 'sha256', 'sha384', 'sha512', 'sha512_224', 'sha512_256', 'ripemd160']) {
    checks[`${alg} hex ${crypto[alg]('metronome', 'hex')}`] = () => true;
  }
  checks[`sha256 base64 ${crypto.sha256('metronome', 'base64')}`] = () => true;
  checks[`sha256 base64url ${crypto.sha256('metronome', 'base64url')}`] = () => true;
  checks[`sha256 base64rawurl ${crypto.sha256('metronome', 'base64rawurl')}`] = () => true;
  checks['sha256 binary is an ArrayBuffer'] = () => crypto.sha256('metronome', 'binary') instanceof ArrayBuffer;
  check(null, checks);
}
