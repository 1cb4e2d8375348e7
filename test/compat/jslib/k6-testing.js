// jslib.k6.io/k6-testing: passing assertions of the value matchers, a
// soft failure (it throws), and a hard failure in the iteration, which
// aborts the test (exit code 108 in k6).
import * as lib from '{{BASE}}/index.js';

const { expect } = lib;

function probe() {
  const out = { names: names(lib), expectNames: names(expect) };
  const pass = (f) => attempt(() => { f(); return 'passed'; });
  out.passing = [
    pass(() => expect(1).toBe(1)),
    pass(() => expect({ a: [1, { b: 2 }] }).toEqual({ a: [1, { b: 2 }] })),
    pass(() => expect(0.1 + 0.2).toBeCloseTo(0.3, 5)),
    pass(() => expect('x').toBeDefined()),
    pass(() => expect(0).toBeFalsy()),
    pass(() => expect(3).toBeGreaterThan(2)),
    pass(() => expect(3).toBeLessThanOrEqual(3)),
    pass(() => expect(new Date()).toBeInstanceOf(Date)),
    pass(() => expect(NaN).toBeNaN()),
    pass(() => expect(null).toBeNull()),
    pass(() => expect([1, 2]).toHaveLength(2)),
    pass(() => expect(undefined).toBeUndefined()),
    pass(() => expect([1, 2, 3]).toContain(2)),
    pass(() => expect({ a: { b: 1 } }).toHaveProperty('a.b', 1)),
    pass(() => expect(1).not.toBe(2)),
  ];
  if (expect.soft) {
    out.soft = attempt(() => expect.soft(1).toBe(2));
  }
  if (expect.configure) {
    out.configured = attempt(() => {
      const soft = expect.configure({ soft: true, colorize: false });
      return [typeof soft, attempt(() => soft(1).toBe(2))];
    });
  }
  return out;
}

function probeIteration() {
  expect(1, 'one is two').toBe(2);
  return 'not aborted';
}
