// A per-request responseCallback overrides the default; null disables the
// expected_response tag and http_req_failed for that request.
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.get(`${__ENV.BASE}/status/503`, { responseCallback: http.expectedStatuses(503) });
  http.get(`${__ENV.BASE}/status/503`);
  http.get(`${__ENV.BASE}/status/200`, { responseCallback: http.expectedStatuses(201) });
  http.get(`${__ENV.BASE}/status/500`, { responseCallback: null });
}
