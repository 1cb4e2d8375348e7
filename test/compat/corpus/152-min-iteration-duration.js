// options.minIterationDuration pads short iterations; the padding is not
// part of iteration_duration but delays the next iteration.
import { check } from 'k6';

export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 3 } }, minIterationDuration: '200ms' };

let last = 0;

export default function () {
  const now = Date.now();
  if (last > 0) {
    check(now - last, { 'next iteration at least 190 ms later': (d) => d >= 190 });
  }
  last = now;
}
