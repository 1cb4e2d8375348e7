// jslib.k6.io/expect and jslib.k6.io/functional, two names of one library:
// the Funk assertions (describe or test, expect ... as ... toEqual, the
// comparisons, toHaveValidJson on a response, toMatchAPISchema through ajv
// from jslib.k6.io) recording checks, and a broken chain.
import http from 'k6/http';
import * as lib from '{{BASE}}/index.js';

function probe() {
  return { names: names(lib) };
}

function probeIteration() {
  const run = lib.describe || lib.test;
  if (!run) return null;
  const res = http.get(`${__ENV.ECHO}/json`);
  return [
    run('passes', (t) => {
      t.expect(res.status).as('status').toEqual(200)
        .and(res).toHaveValidJson()
        .and(res.json('count')).as('count').toBeGreaterThan(2).toBeLessThan(4).toBeBetween(1, 5)
        .and(res.json('name')).toBeTruthy();
      t.expect(res.json()).toMatchAPISchema({ type: 'object', required: ['name', 'count'] });
    }),
    run('breaks', (t) => {
      t.expect(1).as('one').toEqual(2).and(3).toBeGreaterThan(1);
    }),
    attempt(() => run('throws', () => { throw new Error('not an assertion'); })),
  ];
}
