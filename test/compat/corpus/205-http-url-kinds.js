// A URL argument that is not a string (nor http.url's) fails the request
// with error_code 1020 and an empty url; nothing throws, and the value's
// toString is not called.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  let called = false;
  const kinds = {
    object: { toString() { called = true; return `${__ENV.BASE}/status/200`; } },
    array: [`${__ENV.BASE}/status/200`],
    number: 123,
    boxed: new String(`${__ENV.BASE}/status/200`),
    undefined: undefined,
    null: null,
  };
  for (const [kind, url] of Object.entries(kinds)) {
    const res = http.get(url);
    check(res, {
      [`${kind}: fails as an invalid URL`]: (r) => r.status === 0 && r.error_code === 1020 && r.url === '' && r.error.startsWith('invalid URL: '),
    });
  }
  check(called, { 'toString was not called': (c) => c === false });
  check(http.get(`${__ENV.BASE}/status/200`), { 'a string URL works': (r) => r.status === 200 });
}
