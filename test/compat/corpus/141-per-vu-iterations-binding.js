// Issue #9: per-vu-iterations binds iterations to VUs: with 3 VUs × 2,
// each VU runs __ITER 0 and 1 exactly.
import { check } from 'k6';

export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 3, iterations: 2 } } };

export default function () {
  check(null, { [`vu ${__VU} iter ${__ITER}`]: () => true });
}
