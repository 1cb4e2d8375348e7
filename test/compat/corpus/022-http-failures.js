// 4xx and 5xx responses count in http_req_failed and are tagged
// expected_response=false; a threshold on it holds.
import http from 'k6/http';

export const options = {
  iterations: 2,
  thresholds: { http_req_failed: ['rate<0.7'], 'http_req_duration{expected_response:true}': ['max<5000'] },
};

export default function () {
  http.get(`${__ENV.BASE}/status/200`);
  http.get(`${__ENV.BASE}/status/404`);
  http.get(`${__ENV.BASE}/status/500`);
}
