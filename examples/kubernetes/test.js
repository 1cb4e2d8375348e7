import http from 'k6/http';

// 400 arrivals per second for five minutes, split by k6-operator over the
// instances: each runs the global arrivals of its stripe at their global
// intended times.
export const options = {
  scenarios: {
    api: {
      executor: 'constant-arrival-rate',
      rate: 400,
      timeUnit: '1s',
      duration: '5m',
      preAllocatedVUs: 40,
      maxVUs: 200,
    },
  },
};

export default function () {
  http.get(__ENV.TARGET || 'http://my-service.default.svc:8080/');
}
