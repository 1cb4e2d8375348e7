// Issue #9: an ES module import cycle resolves as in the spec.
import { ping } from './lib/cycle-a.js';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(null, { [`cycle ${ping(3)}`]: () => true });
}
