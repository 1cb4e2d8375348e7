// options.maxRedirects caps redirects for every request.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, maxRedirects: 2 };

export default function () {
  const res = http.get(`${__ENV.BASE}/redirect/5`);
  check(res, { [`status after 2 redirects ${res.status}`]: () => true, [`url ${res.url.replace(__ENV.BASE, '')}`]: () => true });
}
