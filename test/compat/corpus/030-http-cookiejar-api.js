// http.cookieJar(): set, cookiesForURL, clear and delete.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const jar = http.cookieJar();
  jar.set(__ENV.BASE, 'manual', 'yes');
  const seen = http.get(`${__ENV.BASE}/cookies`);
  check(seen, { 'jar.set cookie sent': (r) => r.json('cookies.manual') === 'yes' });
  const forURL = jar.cookiesForURL(`${__ENV.BASE}/cookies`);
  check(forURL, { 'cookiesForURL has it': (c) => c.manual && c.manual[0] === 'yes' });
  jar.delete(__ENV.BASE, 'manual');
  check(jar.cookiesForURL(`${__ENV.BASE}/cookies`), { 'deleted': (c) => !c.manual });
  jar.set(__ENV.BASE, 'x', '1');
  jar.clear(__ENV.BASE);
  check(http.get(`${__ENV.BASE}/cookies`), { 'cleared': (r) => Object.keys(r.json('cookies')).length === 0 });
  const own = new http.CookieJar();
  own.set(__ENV.BASE, 'own', 'jar');
  check(http.get(`${__ENV.BASE}/cookies`, { jar: own }), { 'params.jar used': (r) => r.json('cookies.own') === 'jar' });
}
