// jslib.k6.io/k6-utils: the random helpers (their shape, not their
// values), findBetween, normalDistributionStages, parseDuration, the stage
// helpers (which need a running scenario; in setup they throw) and check.
// Named imports, as k6-utils is imported in the wild: issue 25 was about a
// named import of the CommonJS build of 1.3.0-1.6.0.
import * as lib from '{{BASE}}/index.js';
import { randomIntBetween, randomItem, randomString, uuidv4 } from '{{BASE}}/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function probe() {
  const out = { names: names(lib) };
  out.randomIntBetween = [randomIntBetween(7, 7), [0, 1, 2, 3, 4, 5].every(() => { const n = randomIntBetween(1, 3); return n >= 1 && n <= 3 && n === Math.floor(n); })];
  out.randomItem = [randomItem(['only']), ['a', 'b'].includes(randomItem(['a', 'b']))];
  out.randomString = [randomString(12).length, /^[a-z]+$/.test(randomString(20)), randomString(4, 'x') === 'xxxx'];
  out.uuidv4 = [UUID.test(uuidv4()), attempt(() => UUID.test(uuidv4(true)))];
  if (lib.findBetween) {
    const page = '<b>one</b> and <b>two</b>';
    out.findBetween = [lib.findBetween(page, '<b>', '</b>'), attempt(() => lib.findBetween(page, '<b>', '</b>', true)),
      lib.findBetween(page, '<i>', '</i>')];
  }
  if (lib.normalDistributionStages) {
    out.normalDistributionStages = [lib.normalDistributionStages(10, 60, 4), lib.normalDistributionStages(100, 600)];
  }
  if (lib.parseDuration) {
    out.parseDuration = ['1m30s', '1h2m3s4ms', '0.5s', '2d', '100', '3ms'].map((d) => attempt(() => lib.parseDuration(d)));
    out.parseDurationBad = ['', '5x', '1s1s'].map((d) => attempt(() => lib.parseDuration(d)));
  }
  if (lib.getCurrentStageIndex) {
    out.getCurrentStageIndex = attempt(() => lib.getCurrentStageIndex());
    out.tagWithCurrentStageIndex = attempt(() => lib.tagWithCurrentStageIndex());
    out.tagWithCurrentStageProfile = attempt(() => lib.tagWithCurrentStageProfile());
  }
  if (lib.check) {
    out.check = [lib.check(1, { 'is one': (v) => v === 1 }), lib.check(1, { 'is two': (v) => v === 2 }),
      typeof lib.check(1, { 'is async': async (v) => v === 1 })];
  }
  return out;
}

// The stage helpers in a ramping-vus scenario's first iteration.
export const options = { stages: [{ duration: '0.3s', target: 1 }] };

function probeIteration() {
  if (!lib.getCurrentStageIndex) return null;
  return [attempt(() => lib.getCurrentStageIndex()), attempt(() => { lib.tagWithCurrentStageIndex(); return 'tagged'; }),
    attempt(() => { lib.tagWithCurrentStageProfile(); return 'tagged'; })];
}
