// What a script sees of an xk6 extension's Go values: k6's field names,
// synchronous and asynchronous calls, thrown Go errors, the init context
// rule, the options and k6's duration syntax. The test compares the
// console lines with those k6 v2.2.0 printed with the same extension.
import { greet, work, record, echo, thing, fail, initOnly, options, duration } from 'k6/x/probe';
import * as ns from 'k6/x/probe';

const atInit = initOnly();

export default async function () {
  console.log(greet('vu'), atInit);
  const r = await work(20);
  record(2, { kind: 'x' });
  const e = echo({ continue_on_error: true, user_id: 'u1', http_method: 'GET', custom_name: 'c', JSONOnly: 'j', jsonName: 'no', Hidden: 'h' });
  console.log(JSON.stringify(e), e.continue_on_error, e.user_id, e.http_method, e.custom_name, e.json_only, e.hidden);
  const t = thing();
  console.log(t.label, t.http_code, t.describeIt(), t.json(), Object.keys(t).join(','));
  try { fail('boom'); } catch (err) { console.log('caught', String(err)); }
  try { initOnly(); } catch (err) { console.log('caught', String(err)); }
  console.log(options(), duration('1d2h'), duration('1500'));
  try { record(1, { bad: {} }); } catch (err) { console.log('caught', String(err)); }
  console.log(r, Object.keys(ns).length);
}
