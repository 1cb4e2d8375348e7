// --tag adds test-wide tags to every sample; options.tags too.
// compat:args --tag env=ci --tag team=perf
import http from 'k6/http';

export const options = { iterations: 1, tags: { source: 'options' } };

export default function () {
  http.get(`${__ENV.BASE}/`);
}
