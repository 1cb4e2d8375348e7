// ES modules across files, CommonJS require() and open(), all resolved
// relative to the file that names them, not to the working directory.
import { add } from './lib/math.js';
import label, { twice } from './lib/more.js';

const cjs = require('./lib/cjs.js');
const words = open('./data/words.txt');
const bytes = open('data/words.txt', 'b');

export const options = { iterations: 1 };

export default function () {
  const n = words.trim().split('\n').length;
  console.log(`RESULT add=${add(2, 3)} twice=${twice(4)} label=${label} cjs=${cjs.name}:${cjs.mul(3, 4)}:${cjs.nested} ` +
    `lines=${n} bytes=${bytes.byteLength} libdata=${cjs.libData}`);
}
