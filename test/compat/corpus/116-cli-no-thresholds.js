// --no-thresholds: crossed thresholds do not change the exit code.
// compat:args --no-thresholds
import { Counter } from 'k6/metrics';

const c = new Counter('events_c');

export const options = { iterations: 1, thresholds: { events_c: ['count>10'] } };

export default function () {
  c.add(1);
}
