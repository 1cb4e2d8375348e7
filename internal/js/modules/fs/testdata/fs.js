import { open, SeekMode } from 'k6/experimental/fs';
import * as fs from 'k6/experimental/fs';
const file = await open('data.csv');
const DIR = file.path.slice(0, file.path.lastIndexOf('/'));
const clean = (m) => m.split(DIR).join('DIR');
let openErr = '';
try { await open('missing.txt'); } catch (e) { openErr = e.name + ':' + clean(e.message) + ':' + e.kind; }
let dirErr = '';
try { await open('.'); } catch (e) { dirErr = e.name + ':' + clean(e.message) + ':' + e.kind; }
export default async function () {
  const out = [];
  out.push('keys=' + Object.keys(fs).sort().join(','));
  out.push('SeekMode=' + JSON.stringify(SeekMode));
  out.push('path=' + (file.path || '').split('/').pop());
  const st = await file.stat();
  out.push('stat=' + st.name + ':' + st.size + ':' + Object.keys(st).sort().join(','));
  const buf = new Uint8Array(8);
  let n = await file.read(buf);
  out.push('read1=' + n + ':' + JSON.stringify(String.fromCharCode(...buf.subarray(0, n))));
  out.push('seekCur=' + await file.seek(2, SeekMode.Current));
  n = await file.read(buf);
  out.push('read2=' + n + ':' + JSON.stringify(String.fromCharCode(...buf.subarray(0, n))));
  out.push('seekEnd=' + await file.seek(-3, SeekMode.End));
  n = await file.read(buf);
  out.push('read3=' + n + ':' + JSON.stringify(String.fromCharCode(...buf.subarray(0, n))));
  out.push('eof=' + await file.read(buf));
  out.push('seekStart=' + await file.seek(0, SeekMode.Start));
  let total = 0; let c;
  while ((c = await file.read(buf)) !== null) total += c;
  out.push('total=' + total);
  try { await file.seek(-1, SeekMode.Start); out.push('negseek=ok'); } catch (e) { out.push('negseek=' + e.name + ':' + e.message + ':' + e.kind); }
  try { await file.seek(0, 7); out.push('badwhence=ok'); } catch (e) { out.push('badwhence=' + e.name + ':' + e.message + ':' + e.kind); }
  try { await file.read('x'); out.push('badbuf=ok'); } catch (e) { out.push('badbuf=' + e.name + ':' + e.message + ':' + e.kind); }
  try { await open('data.csv'); out.push('openvu=ok'); } catch (e) { out.push('openvu=' + e.name + ':' + e.message + ':' + e.kind); }
  const sub = new Uint8Array(new ArrayBuffer(16), 4, 4);
  await file.seek(0, SeekMode.Start);
  n = await file.read(sub);
  out.push('sub=' + n + ':' + String.fromCharCode(...sub) + ':' + new Uint8Array(sub.buffer)[4]);
  out.push('openErr=' + openErr);
  out.push('dirErr=' + dirErr);
  for (const l of out) console.log(l);
}
