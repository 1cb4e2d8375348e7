export const options = {
  scenarios: {
    open: { executor: 'constant-arrival-rate', rate: 5, duration: '5s', preAllocatedVUs: 2, maxVUs: 10, gracefulStop: '2s' },
    closed: { executor: 'constant-vus', vus: 3, duration: '5s', startTime: '6s', gracefulStop: '5s' },
    ramp: { executor: 'ramping-vus', stages: [{ duration: '3s', target: 4 }], startTime: '1s' },
  },
  thresholds: { iterations: ['count>0'] },
};
export default function () { console.log('never on stdout'); }
console.log('init logs go to stderr');
