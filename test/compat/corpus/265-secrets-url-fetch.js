// --secret-source=url (k6 v2.2.0's URL secret source): one HTTP request
// per secret, {key} in urlTemplate replaced by its name; the whole body
// is the secret, or with responsePath the string at that JSON path;
// headers.NAME=VALUE are sent with every request. A value is fetched
// once and kept (the server counts one request for a key read twice),
// and every value fetched is masked in log lines.
// compat:args --secret-source=url=urlTemplate=${BASE}/secret/plain/{key},default
// compat:args --secret-source=url=name=json,urlTemplate=${BASE}/secret/json/{key},responsePath=data.value
// compat:args --secret-source=url=name=auth,urlTemplate=${BASE}/secret/auth/{key},headers.Authorization=t0k,method=GET
// compat:messages
import secrets from 'k6/secrets';
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

function note(label, v) {
  check(null, { [`${label}: ${v}`]: () => true });
}

export default async function () {
  http.post(`${__ENV.BASE}/secret/reset/f265-`);
  const key = 'f265-a';
  const a = await secrets.get(key);
  const b = await secrets.get(key);
  note('plain', `${a === `plain-${key}`} ${a === b} ${typeof a} ${a.length - key.length}`);
  note('plain requests', http.get(`${__ENV.BASE}/secret/hits/${key}`).body);
  const j = await secrets.source('json').get(key);
  note('json', `${j === `json-${key}`}`);
  const h = await secrets.source('auth').get(key);
  note('auth', `${h === `auth-${key}`}`);
  const d = await secrets.source('default').get(key);
  note('default is the plain source', `${d === a}`);
  console.warn(`plain=${a} json=${JSON.stringify({ j })} auth=[${h}] fixed=plain-fixed`);
  const fixed = await secrets.get('fixed');
  console.error(`after fetching: plain-fixed ${fixed}`);
}
