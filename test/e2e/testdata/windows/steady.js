import http from 'k6/http';

// 300 requests a second for 6 s, an open model: compare's input.
export const options = {
  scenarios: {
    api: { executor: 'constant-arrival-rate', rate: 300, duration: '6s', preAllocatedVUs: 150 },
  },
};

export default function () {
  http.get(__ENV.TARGET, { tags: { name: 'home' } });
}
