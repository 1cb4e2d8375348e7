// jslib.k6.io/form-urlencoded: encode nested objects, arrays and options.
import formurlencoded from '{{BASE}}/index.js';
import * as lib from '{{BASE}}/index.js';

function probe() {
  const obj = { name: 'k6 user', n: 1, flag: true, list: ['a', 'b'], nested: { x: 'y', deeper: { z: 0 } }, empty: '', nil: null };
  return {
    names: names(lib),
    plain: formurlencoded(obj),
    options: attempt(() => formurlencoded(obj, { ignorenull: true, skipIndex: true, sorted: true, skipBracket: true })),
    special: formurlencoded({ 'a&b': 'c=d', 'ü': '€ %' }),
  };
}
