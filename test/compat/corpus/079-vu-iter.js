// __VU and __ITER with one VU: 1 and 0, 1, 2; __VU is 0 in init of the
// first (options) pass only in k6, so it is not read there.
import { check } from 'k6';

export const options = { iterations: 3 };

export default function () {
  check(null, { [`vu ${__VU} iter ${__ITER}`]: () => true });
}
