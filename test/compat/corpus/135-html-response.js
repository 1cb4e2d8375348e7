// Issue #9: response.html() and its selector argument.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE}/html`);
  check(res, {
    [`h1 ${res.html('h1').text()}`]: () => true,
    [`links ${res.html().find('a.link').size()}`]: () => true,
    [`h1 class ${res.html('#top').attr('class')}`]: () => true,
  });
}
