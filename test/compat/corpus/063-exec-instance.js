// exec.instance counters seen from a later iteration.
import exec from 'k6/execution';
import { check, sleep } from 'k6';

export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 3 } } };

export default function () {
  check(null, {
    [`completed before iteration ${__ITER}: ${exec.instance.iterationsCompleted}`]: () => true,
    [`vusInitialized ${exec.instance.vusInitialized}`]: () => true,
    [`vusActive ${exec.instance.vusActive}`]: () => true,
    'currentTestRunDuration >= 0': () => exec.instance.currentTestRunDuration >= 0,
  });
  sleep(0.01);
}
