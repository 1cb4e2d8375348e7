// handleSummary writes the data as JSON and a short text to files in
// __ENV.OUT_DIR and a line to stdout.
import http from 'k6/http';
import { check } from 'k6';
import { Trend } from 'k6/metrics';

const size = new Trend('body_size');

export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 10 } },
  thresholds: { http_reqs: ['count==10'], body_size: ['max<0'] },
};

export function setup() {
  return { greeting: 'hello' };
}

export default function () {
  const res = http.get(__ENV.TARGET);
  check(res, { 'status is 200': (r) => r.status === 200 });
  size.add(res.body.length);
}

export function handleSummary(data) {
  const names = Object.keys(data.metrics).sort();
  const text = names.map((n) => `${n} ${data.metrics[n].type}`).join('\n') + '\n';
  const out = {
    stdout: `HANDLE-SUMMARY iterations=${data.metrics.iterations.values.count}\n`,
  };
  out[`${__ENV.OUT_DIR}/summary.json`] = JSON.stringify(data, null, 2);
  out[`${__ENV.OUT_DIR}/summary.txt`] = text;
  return out;
}
