// Issue 25 (the jslib.k6.io sweep): a CommonJS file with a top-level
// return loads as CommonJS, as in k6, and k6's global names the global
// object (k6chaijs 4.3.4.2 reads it).
import { Greeter } from './lib/cjs-return.js';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(null, {
    [Greeter('k6')]: () => true,
    [`global is globalThis: ${global === globalThis}`]: () => true,
  });
}
