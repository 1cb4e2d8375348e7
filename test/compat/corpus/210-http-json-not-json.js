// res.json(selector) on a body that is not JSON (an HTML error page) finds
// nothing: undefined, as in k6; without a selector it throws k6's error
// with the line and character. Any argument is a selector, undefined
// included. A request refused before it was sent (a URL that does not
// parse) has an empty body: undefined with a selector, a throw without.
// A request that failed on the way (refused connection, no scheme) has a
// null body, and json() throws with a selector too.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

// stable is v as JSON with its keys sorted: k6's objects from json() come
// from a Go map, whose keys have no order.
function stable(v) {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stable(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

function attempt(label, f) {
  let out;
  try {
    const v = f();
    out = v === undefined ? 'undefined' : stable(v);
  } catch (e) {
    out = `throws ${e.name}: ${e.message}`;
  }
  check(null, { [`${label} => ${out}`]: () => true });
}

export default function () {
  const html = http.get(`${__ENV.BASE}/html`);
  const text = http.get(`${__ENV.BASE}/status/404`);
  const json = http.get(`${__ENV.BASE}/json`);
  const bad = http.get('http://[fe80');
  const refused = http.get('http://127.0.0.1:1/');
  const noScheme = http.get('localhost/x');
  const none = http.get(`${__ENV.BASE}/json`, { responseType: 'none' });
  for (const [name, r] of Object.entries({ html, text, json, bad, refused, noScheme, none })) {
    attempt(`${name} json()`, () => r.json());
    attempt(`${name} json('name')`, () => r.json('name'));
    attempt(`${name} json(undefined)`, () => r.json(undefined));
    attempt(`${name} json(null)`, () => r.json(null));
    attempt(`${name} json('')`, () => r.json(''));
  }
  const lines = http.post(`${__ENV.BASE}/raw`, '{\n  "a": 1,\n  "é": oops\n}');
  attempt('multi-line json()', () => lines.json());
  attempt("multi-line json('a')", () => lines.json('a'));
  attempt('truncated json()', () => http.post(`${__ENV.BASE}/raw`, '{"a": [1, 2').json());
  attempt('cut after a newline json()', () => http.post(`${__ENV.BASE}/raw`, '{"a": 1\n').json());
  attempt('trailing newline json()', () => http.post(`${__ENV.BASE}/raw`, '{"a": 1}\n\nx').json());
}
