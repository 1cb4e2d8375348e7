// Issue #9: require() of an ES module gives its namespace.
import { check } from 'k6';

const m = require('./lib/esm.js');

export const options = { iterations: 1 };

export default function () {
  check(m, { 'named export': (x) => x.add(1, 2) === 3, 'default export': (x) => typeof x.default === 'function' });
}
