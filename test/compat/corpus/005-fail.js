// fail() aborts the iteration with an error; the run goes on and exits 0.
import { check, fail } from 'k6';

export const options = { iterations: 4 };

export default function () {
  check(null, { 'before fail': () => true });
  if (__ITER % 2 === 1) {
    fail('odd iteration');
  }
  check(null, { 'after fail': () => true });
}
