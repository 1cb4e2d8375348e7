// TextDecoder: a character split across chunks with {stream: true}, a BOM,
// UTF-16LE, and fatal on bad UTF-8.
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const bytes = new TextEncoder().encode('h\u00e9\u20ac\u{1F600}!');
  const d = new TextDecoder();
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    out += d.decode(bytes.subarray(i, i + 3), { stream: true });
  }
  out += d.decode();
  const bom = new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]));
  const kept = new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]));
  const le = new TextDecoder('utf-16le').decode(new Uint8Array([0x68, 0, 0x69, 0]));
  let fatal = 'no error';
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff, 0x41]));
  } catch (e) {
    fatal = e.name;
  }
  check(null, {
    [`streamed ${out} ${out.length}`]: () => out === 'h\u00e9\u20ac\u{1F600}!',
    [`bom ${bom.length} kept ${kept.length}`]: () => true,
    [`utf-16le ${le}`]: () => true,
    [`fatal ${fatal}`]: () => true,
    [`replacement ${new TextDecoder().decode(new Uint8Array([0xff])).charCodeAt(0)}`]: () => true,
  });
}
