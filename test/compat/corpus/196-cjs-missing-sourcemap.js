// Issue 25: a CommonJS module ending with a sourceMappingURL line whose
// map cannot be loaded still runs as CommonJS; k6 warns "Couldn't load
// source map" and goes on.
import { x, twice } from './lib/cjs-sourcemap.js';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(null, {
    [`x is ${x}, twice(21) is ${twice(21)}`]: () => true,
  });
}
