// Issue #9: k6/experimental/fs: open, stat, read, seek.
import { open, SeekMode } from 'k6/experimental/fs';
import { check } from 'k6';

const file = await open('./data/text.txt');

export const options = { iterations: 1 };

export default async function () {
  const info = await file.stat();
  const buf = new Uint8Array(4);
  await file.seek(0, SeekMode.Start);
  const n = await file.read(buf);
  check(null, {
    [`stat size ${info.size} name ${info.name}`]: () => true,
    [`read ${n} bytes: ${String.fromCharCode(...buf)}`]: () => true,
  });
}
