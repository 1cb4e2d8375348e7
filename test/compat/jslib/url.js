// jslib.k6.io/url: the URL and URLSearchParams polyfills.
import * as lib from '{{BASE}}/index.js';

function probe() {
  const u = new lib.URL('https://user:pw@example.com:8080/a/b/../c?x=1&y=2&x=3#frag');
  u.searchParams.append('z', 'a b&c');
  const p = new lib.URLSearchParams('q=k6&lang=en&q=load');
  p.sort();
  return {
    names: names(lib),
    parts: [u.protocol, u.username, u.password, u.hostname, u.port, u.pathname, u.search, u.hash, u.origin],
    href: u.href,
    getAll: u.searchParams.getAll('x'),
    relative: new lib.URL('../d?e=f', 'https://example.com/a/b/c').href,
    params: [p.toString(), p.get('q'), p.has('lang'), [...p.keys()]],
    invalid: attempt(() => new lib.URL('not a url')),
    idn: attempt(() => new lib.URL('https://bücher.example/').hostname),
  };
}
