// Issue #9: importing the default of a CommonJS bundle marked
// __esModule gives its `default`, as k6 does (chai's jslib bundle).
import lib from './lib/bundle.js';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(null, {
    [`default is ${typeof lib === 'function' ? 'the default function' : 'module.exports'}`]: () => true,
  });
}
