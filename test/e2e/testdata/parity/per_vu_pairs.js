// per-vu-iterations binds iterations to VUs: each of the 3 VUs runs
// exactly 2 iterations, however fast they are. Each iteration logs its
// __VU and __ITER.
export const options = {
  scenarios: { pairs: { executor: 'per-vu-iterations', vus: 3, iterations: 2 } },
};

export default function () {
  console.log(`pair vu=${__VU} iter=${__ITER}`);
}
