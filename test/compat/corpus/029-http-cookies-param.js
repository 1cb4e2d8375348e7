// Request cookies from params, replace semantics, and a jar-less request.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  http.get(`${__ENV.BASE}/cookies/set?a=jar`);
  const r1 = http.get(`${__ENV.BASE}/cookies`, { cookies: { b: 'param' } });
  check(r1, { 'param and jar cookies': (r) => r.json('cookies.a') === 'jar' && r.json('cookies.b') === 'param' });
  const r2 = http.get(`${__ENV.BASE}/cookies`, { cookies: { a: 'override' } });
  check(r2, { [`param without replace: ${r2.json('cookies.a')}`]: () => true });
  const r3 = http.get(`${__ENV.BASE}/cookies`, { cookies: { a: { value: 'replaced', replace: true } } });
  check(r3, { 'replace wins': (r) => r.json('cookies.a') === 'replaced' });
}
