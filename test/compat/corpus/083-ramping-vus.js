// ramping-vus: 0 → 2 VUs over 1 s, then 2 for 0.5 s, then down to 0.
import { sleep } from 'k6';

export const options = {
  scenarios: {
    ramp: { executor: 'ramping-vus', startVUs: 0, stages: [{ duration: '1s', target: 2 }, { duration: '500ms', target: 2 }, { duration: '500ms', target: 0 }], gracefulRampDown: '0s' },
  },
};

export default function () {
  sleep(0.25);
}
