// --summary-trend-stats and --summary-time-unit from the command line.
// compat:args --summary-trend-stats=avg,p(90),max --summary-time-unit=s
import http from 'k6/http';

export const options = { iterations: 2 };

export default function () {
  http.get(`${__ENV.BASE}/`);
}

export function handleSummary(data) {
  return { [__ENV.HS_OUT]: JSON.stringify({ options: data.options, keys: Object.keys(data.metrics.http_req_duration.values).sort() }) };
}
