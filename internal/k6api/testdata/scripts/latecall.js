// A callback reserved by a goroutine the iteration started, as
// extensions built on k6-taskqueue-lib reserve theirs, runs in that
// iteration, before it ends.
import { lateCall } from 'k6/x/probe';

export const options = { vus: 1, iterations: 20 };

export default function () {
  const iter = __ITER;
  lateCall(() => console.log('late call', iter, 'in', __ITER));
}
