// ramping-arrival-rate: 10/s to 10/s over 1 s, then 10 → 0 over 1 s.
import { check } from 'k6';

export const options = {
  scenarios: {
    rar: { executor: 'ramping-arrival-rate', startRate: 10, timeUnit: '1s', preAllocatedVUs: 4, stages: [{ duration: '1s', target: 10 }, { duration: '1s', target: 0 }] },
  },
};

export default function () {
  check(null, { ran: () => true });
}
