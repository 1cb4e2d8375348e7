// jslib.k6.io/kahwah: a suite of steps registered in the init context and
// run by kahwah's default function in the iteration: a passing step, a
// throwing one, a skipped one; the thresholds and the per-step metrics it
// makes, and the groups it records.
import * as lib from '{{BASE}}/index.js';

lib.describe('suite', () => {
  lib.it('works', () => {});
  lib.it('throws', () => { throw new Error('step failed'); });
});
lib.step('top step', () => {});

function probe() {
  return { names: names(lib), options: lib.options, thresholds: lib.thresholds };
}

function probeIteration() {
  return attempt(() => { lib.default(); return 'ran'; });
}
