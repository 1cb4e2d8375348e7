// constant-arrival-rate: 10/s for 1 s with idle VUs: 10 iterations, the
// first at t = 0, none dropped.
import { check } from 'k6';

export const options = {
  scenarios: { car: { executor: 'constant-arrival-rate', rate: 10, timeUnit: '1s', duration: '1s', preAllocatedVUs: 5 } },
};

export default function () {
  check(null, { ran: () => true });
}
