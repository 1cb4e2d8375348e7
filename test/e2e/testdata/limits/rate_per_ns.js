// One arrival per nanosecond: 10^9 arrivals/s.
export const options = {
  scenarios: { s: { executor: 'constant-arrival-rate', rate: 1, timeUnit: '1ns', duration: '10s', preAllocatedVUs: 1 } },
};
export default function () { console.log('DEFAULT-RAN'); }
