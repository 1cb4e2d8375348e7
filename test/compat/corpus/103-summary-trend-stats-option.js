// options.summaryTrendStats chooses the export's and handleSummary's trend
// stats.
import http from 'k6/http';

export const options = { iterations: 2, summaryTrendStats: ['min', 'max', 'p(99)', 'p(99.9)', 'count', 'avg'] };

export default function () {
  http.get(`${__ENV.BASE}/`);
}

export function handleSummary(data) {
  return { [__ENV.HS_OUT]: JSON.stringify({ metrics: data.metrics, options: data.options }) };
}
