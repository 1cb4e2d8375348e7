import { open } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';
import * as csvns from 'k6/experimental/csv';
const file = await open('people.csv');
const semi = await open('semi.csv');
const all = await csv.parse(file);
let again = '';
try { again = 'ok:' + (await csv.parse(file)).length; } catch (e) { again = e.name + ':' + e.message; }
const objs = await csv.parse(await open('people.csv'), { asObjects: true });
const skip = await csv.parse(await open('people.csv'), { skipFirstLine: true });
const range = await csv.parse(await open('people.csv'), { fromLine: 2, toLine: 3 });
const rangeSkip = await csv.parse(await open('people.csv'), { skipFirstLine: true, fromLine: 2, toLine: 3 });
const f1 = await open('people.csv'), f2 = await open('people.csv'), f3 = await open('people.csv'), f4 = await open('people.csv');
const semiArr = await csv.parse(semi, { delimiter: ';' });
let parseErr = '';
try { await csv.parse('nope'); } catch (e) { parseErr = e.name + ':' + e.message; }
let badRange = '';
try { await csv.parse(await open('people.csv'), { fromLine: 3, toLine: 1 }); } catch (e) { badRange = e.name + ':' + e.message; }
const p = new csv.Parser(f1);
const p2 = new csv.Parser(f2, { asObjects: true });
let objFrom = 'ok';
try { new csv.Parser(await open('people.csv'), { asObjects: true, fromLine: 2 }); } catch (e) { objFrom = e.name + ':' + e.message; }
let objFromParse = 'ok';
try { await csv.parse(await open('people.csv'), { asObjects: true, fromLine: 2 }); } catch (e) { objFromParse = e.name + ':' + e.message; }
const p3 = new csv.Parser(f3, { skipFirstLine: true, toLine: 2 });
const p4 = new csv.Parser(await open('semi.csv'), { delimiter: ';' });
let parserBad = 'ok';
try { new csv.Parser('x'); } catch (e) { parserBad = e.name + ':' + e.message; }
let parserNoNew = 'ok';
try { csv.Parser(await open('semi.csv')); } catch (e) { parserNoNew = e.name; }
export default async function () {
  const o = [];
  o.push('again=' + again);
  o.push('keys=' + Object.keys(csvns).sort().join(','));
  o.push('all=' + all.length + ':' + JSON.stringify(all[0]) + ':' + JSON.stringify(all[2]) + ':' + Array.isArray(all) + ':' + typeof all.map);
  o.push('objs=' + objs.length + ':' + JSON.stringify(objs[0]) + ':' + JSON.stringify(objs[3]));
  o.push('skip=' + skip.length + ':' + JSON.stringify(skip[0]));
  o.push('range=' + range.length + ':' + JSON.stringify(range[0]) + ':' + JSON.stringify(range[range.length - 1]));
  o.push('rangeSkip=' + rangeSkip.length + ':' + JSON.stringify(rangeSkip[0]));
  o.push('semi=' + JSON.stringify(semiArr[1]));
  o.push('frozen=' + (() => { try { all[0][0] = 'x'; return all[0][0]; } catch (e) { return e.name; } })());
  o.push('parseErr=' + parseErr);
  o.push('badRange=' + badRange);
  
  const seq = [];
  let r;
  while (!(r = await p.next()).done) seq.push(JSON.stringify(r.value));
  o.push('parser=' + seq.join(' ') + ' | last=' + JSON.stringify(r));
  const a = await p2.next(); const b = await p2.next();
  const so = (r) => JSON.stringify([r.done, Object.keys(r.value).sort().map(k => [k, r.value[k]])]);
  o.push("parserObj=" + so(a) + " " + so(b));
  const s3 = []; while (!(r = await p3.next()).done) s3.push(JSON.stringify(r.value));
  o.push('parserSkip=' + s3.join(' '));
  o.push('parserSemi=' + JSON.stringify((await p4.next()).value));
  try { new csv.Parser(f4); o.push('parserVU=ok'); } catch (e) { o.push('parserVU=' + e.name + ':' + e.message); }
  o.push('parserBad=' + parserBad);
  o.push('objFrom=' + objFrom);
  o.push('objFromParse=' + objFromParse);
  o.push('parserNoNew=' + parserNoNew);
  for (const l of o) console.log(l);
}
