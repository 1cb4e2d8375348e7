// k6/encoding: every base64 variant, strings and ArrayBuffers.
import encoding from 'k6/encoding';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const s = 'hello?world>>';
  const out = {
    std: encoding.b64encode(s),
    rawstd: encoding.b64encode(s, 'rawstd'),
    url: encoding.b64encode(s, 'url'),
    rawurl: encoding.b64encode(s, 'rawurl'),
  };
  const checks = {};
  for (const [k, v] of Object.entries(out)) {
    checks[`${k}=${v}`] = () => true;
  }
  checks['decode std to string'] = () => encoding.b64decode(out.std, 'std', 's') === s;
  checks['decode rawurl to string'] = () => encoding.b64decode(out.rawurl, 'rawurl', 's') === s;
  checks['decode returns ArrayBuffer'] = () => encoding.b64decode(out.std) instanceof ArrayBuffer;
  checks['encode ArrayBuffer'] = () => encoding.b64encode(new Uint8Array([1, 2, 255]).buffer) === 'AQL/';
  check(null, checks);
}
