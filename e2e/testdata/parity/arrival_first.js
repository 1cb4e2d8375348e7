// An arrival-rate scenario with idle VUs drops nothing, not even the
// arrival at t = 0. EXECUTOR picks constant-arrival-rate (10/s for 1 s)
// or ramping-arrival-rate (10/s held for 1 s).
const scenarios = {
  'constant-arrival-rate': { executor: 'constant-arrival-rate', rate: 10, timeUnit: '1s', duration: '1s', preAllocatedVUs: 5 },
  'ramping-arrival-rate': {
    executor: 'ramping-arrival-rate', startRate: 10, timeUnit: '1s', preAllocatedVUs: 5,
    stages: [{ duration: '1s', target: 10 }],
  },
};

export const options = { scenarios: { s: scenarios[__ENV.EXECUTOR] } };

export default function () {}
