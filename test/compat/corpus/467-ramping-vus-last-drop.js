// A VU the last stage removes at its very end is interrupted
// gracefulRampDown later, not let run on under gracefulStop: the second
// iteration (1.4 s to 2.8 s) is cut at 2.2 s.
import { sleep } from 'k6';

export const options = {
  scenarios: { rv: { executor: 'ramping-vus', startVUs: 1, stages: [{ duration: '1s', target: 1 }, { duration: '1s', target: 0 }], gracefulRampDown: '200ms' } },
};

export default function () {
  sleep(1.4);
}
