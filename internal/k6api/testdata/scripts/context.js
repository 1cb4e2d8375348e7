// The context of each iteration ends when the iteration returns, as in
// k6: the probe finds the one it kept in the VU's previous iteration done.
// A promise whose goroutine reserves its place in the event loop 1 ms
// late still settles in its own iteration.
import { prevDone, lateResolve } from 'k6/x/probe';

export const options = { vus: 1, iterations: 3 };

export default async function () {
  console.log('previous call', prevDone());
  const iter = __ITER;
  await lateResolve(1);
  console.log('settled', iter, 'in', __ITER);
}
