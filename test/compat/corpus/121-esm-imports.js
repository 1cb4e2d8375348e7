// ES modules: named, default and namespace imports of local files, and a
// re-export.
import greet, { add, PI } from './lib/esm.js';
import * as ns from './lib/esm.js';
import { again } from './lib/reexport.js';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(null, {
    'default': () => greet('k6') === 'hello k6',
    'named': () => add(2, 3) === 5 && PI === 3.14,
    'namespace': () => ns.add(1, 1) === 2 && typeof ns.default === 'function',
    're-export': () => again(4) === 5,
  });
}
