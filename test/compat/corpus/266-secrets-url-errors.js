// The url secret source's failures, as k6 v2.2.0 words them: each get
// rejects with the bare message. A status other than 200 is "status code
// N: failed to get secret"; 5xx and 429 are tried again maxRetries times
// (the server counts the requests), 4xx are not; a flaky 503 then 200
// gives the value. A responsePath that is missing or not a string, a
// body over 24 KiB, a timeout and a refused connection fail as k6 says.
// compat:args --secret-source=url=name=st,urlTemplate=${BASE}/secret/status/{key},maxRetries=1,retryBackoff=1ms
// compat:args --secret-source=url=name=flaky,urlTemplate=${BASE}/secret/flaky/{key},maxRetries=2,retryBackoff=1ms
// compat:args --secret-source=url=name=path,urlTemplate=${BASE}/secret/json/{key},responsePath=data.missing
// compat:args --secret-source=url=name=num,urlTemplate=${BASE}/secret/json/{key},responsePath=data.num
// compat:args --secret-source=url=name=obj,urlTemplate=${BASE}/secret/json/{key},responsePath=data.obj
// compat:args --secret-source=url=name=list,urlTemplate=${BASE}/secret/json/{key},responsePath=list.0
// compat:args --secret-source=url=name=size,urlTemplate=${BASE}/secret/size/{key}
// compat:args --secret-source=url=name=slow,urlTemplate=${BASE}/secret/slow/{key},timeout=200ms,maxRetries=0
// compat:args --secret-source=url=name=refused,urlTemplate=http://127.0.0.1:1/{key},maxRetries=0
import secrets from 'k6/secrets';
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

async function attempt(source, key) {
  let out;
  try {
    const v = await secrets.source(source).get(key);
    out = `value of ${v.length} chars`;
  } catch (e) {
    out = `rejects ${typeof e} ${String(e).replaceAll(__ENV.BASE, 'BASE')}`;
  }
  check(null, { [`${source}(${key}) ${out}`]: () => true });
}

function hits(path) {
  return http.get(`${__ENV.BASE}/secret/hits/${path}`).body;
}

export default async function () {
  http.post(`${__ENV.BASE}/secret/reset/status-`);
  http.post(`${__ENV.BASE}/secret/reset/f266-`);
  for (const code of [404, 401, 500, 502, 429]) await attempt('st', String(code));
  const tries = [404, 401, 500, 502, 429].map((c) => `${c}:${hits(`status-${c}`)}`);
  check(null, { [`requests per status ${tries.join(' ')}`]: () => true });
  const key = 'f266-a';
  try {
    const v = await secrets.source('flaky').get(key);
    check(null, { [`flaky: ${v === `flaky-${key}`} after ${hits(key)} requests`]: () => true });
  } catch (e) {
    check(null, { [`flaky rejects ${e}`]: () => true });
  }
  await attempt('path', 'a');
  await attempt('num', 'a');
  await attempt('obj', 'a');
  await attempt('list', 'a');
  await attempt('size', String(24 * 1024));
  await attempt('size', String(24 * 1024 + 1));
  await attempt('slow', '1000');
  await attempt('refused', 'nothing-listens');
  await attempt('nosuch', 'any');
}
