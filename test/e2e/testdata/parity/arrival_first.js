// An arrival-rate scenario with idle VUs drops nothing, not even the
// arrival at t = 0. EXECUTOR picks constant-arrival-rate (2/s for 2 s)
// or ramping-arrival-rate (2/s held for 2 s).
const scenarios = {
  'constant-arrival-rate': { executor: 'constant-arrival-rate', rate: 2, timeUnit: '1s', duration: '2s', preAllocatedVUs: 5 },
  'ramping-arrival-rate': {
    executor: 'ramping-arrival-rate', startRate: 2, timeUnit: '1s', preAllocatedVUs: 5,
    stages: [{ duration: '2s', target: 2 }],
  },
};

export const options = { scenarios: { s: scenarios[__ENV.EXECUTOR] } };

export default function () {}
