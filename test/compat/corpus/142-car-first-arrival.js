// Issue #9: constant-arrival-rate starts its first iteration at t = 0:
// rate 10 for 1 s with 5 idle VUs runs 10 and drops none.
import { Counter } from 'k6/metrics';

const ran = new Counter('ran');

export const options = {
  scenarios: { car: { executor: 'constant-arrival-rate', rate: 10, timeUnit: '1s', duration: '1s', preAllocatedVUs: 5 } },
};

export default function () {
  ran.add(1);
}
