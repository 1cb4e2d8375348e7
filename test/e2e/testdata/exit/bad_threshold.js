export const options = {
  iterations: 1,
  thresholds: { http_req_duration: ['p95 < 200'] },
};

export default function () {}
