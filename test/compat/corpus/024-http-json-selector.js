// Response.json() with and without a selector path.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const r = http.get(`${__ENV.BASE}/json`);
  const all = r.json();
  check(r, {
    'whole document': () => all.name === 'metronome' && all.items.length === 3,
    [`name ${r.json('name')}`]: () => true,
    [`items.1.tag ${r.json('items.1.tag')}`]: () => true,
    [`nested.flag ${r.json('nested.flag')}`]: () => true,
    [`nested.ratio ${r.json('nested.ratio')}`]: () => true,
    [`items.# ${r.json('items.#')}`]: () => true,
    [`missing ${r.json('nope')}`]: () => true,
  });
  const bad = http.get(`${__ENV.BASE}/`);
  let threw = false;
  try { bad.json(); } catch (e) { threw = true; }
  check(threw, { 'json of non-JSON throws': (x) => x === true });
}
