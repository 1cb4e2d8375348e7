// check() with passing and failing conditions, a non-response subject,
// tags on checks and the boolean it returns.
import { check } from 'k6';

export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 6 } } };

export default function () {
  const all = check(__ITER, {
    'always true': () => true,
    'always false': () => false,
    'truthy number': () => 1,
    'falsy string': () => '',
  }, { kind: 'mixed' });
  check(all, { 'check returned false': (v) => v === false });
  check(null, { 'throwing condition is a failure': () => { throw new Error('boom'); } });
}
