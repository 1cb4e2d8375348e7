import http from 'k6/http';

// 400 arrivals per second for five minutes (RATE and DURATION with -e
// change them), split by k6-operator over the instances: each runs the
// global arrivals of its stripe at their global intended times. The
// thresholds hold or fail on the whole test once `metronome merge` has
// merged the runners' result files (merge-job.yaml); the abortOnFail ones
// stop every runner while the test runs when watch-job.yaml watches their
// union.
export const options = {
  scenarios: {
    api: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE || 400),
      timeUnit: '1s',
      duration: __ENV.DURATION || '5m',
      preAllocatedVUs: 40,
      maxVUs: 200,
    },
  },
  thresholds: {
    corrected_latency: [{ threshold: 'p(99)<500', abortOnFail: true, delayAbortEval: '30s' }],
    'corrected_latency{name:home}': ['p(99.9)<1000'],
    http_req_failed: [{ threshold: 'rate<0.01', abortOnFail: true, delayAbortEval: '30s' }],
  },
};

export default function () {
  http.get(__ENV.TARGET || 'http://my-service.default.svc:8080/', { tags: { name: 'home' } });
}
