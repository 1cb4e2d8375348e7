// require() of a CommonJS file with module.exports and exports.
import { check } from 'k6';

const lib = require('./lib/cjs.js');
const other = require('./lib/cjs-exports.js');

export const options = { iterations: 1 };

export default function () {
  check(null, {
    'module.exports function': () => lib.triple(3) === 9,
    'exports property': () => other.name === 'exports',
    'require is cached': () => require('./lib/cjs.js') === lib,
  });
}
