// --system-tags limits the tags every sample gets.
// compat:args --system-tags=method,status
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.get(`${__ENV.BASE}/status/201`);
}
