// setResponseCallback with expectedStatuses decides http_req_failed and
// the expected_response tag.
import http from 'k6/http';

http.setResponseCallback(http.expectedStatuses(200, { min: 400, max: 404 }));

export const options = { iterations: 1 };

export default function () {
  for (const code of [200, 201, 302, 404, 500]) {
    http.get(`${__ENV.BASE}/status/${code}`, { redirects: 0 });
  }
}
