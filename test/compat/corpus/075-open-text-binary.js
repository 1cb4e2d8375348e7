// open() reads text and, with 'b', bytes as an ArrayBuffer; paths are
// relative to the script.
import { check } from 'k6';

const text = open('./data/text.txt');
const bin = open('data/bytes.bin', 'b');

export const options = { iterations: 1 };

export default function () {
  check(null, {
    'text content': () => text === 'line one\nline two\n',
    'binary is an ArrayBuffer': () => bin instanceof ArrayBuffer,
    [`binary bytes ${Array.from(new Uint8Array(bin)).join(',')}`]: () => true,
  });
}
