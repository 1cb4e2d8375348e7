// Request tags: a name that groups URLs, custom tags, and tags that end up
// on every http_* metric.
import http from 'k6/http';

export const options = { iterations: 3 };

export default function () {
  http.get(`${__ENV.BASE}/status/200?i=${__ITER}`, { tags: { name: 'status-by-iter' } });
  http.get(`${__ENV.BASE}/json`, { tags: { kind: 'api', team: 'core' } });
  http.get(`${__ENV.BASE}/`, { tags: { name: 'root' }, headers: {} });
}
