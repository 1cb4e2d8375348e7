// Issue 25 (the jslib.k6.io sweep): exec.vu.metrics.metadata, which
// http-instrumentation-tempo sets around every request, holds values the
// VU's samples carry without being tagged by them.
import exec from 'k6/execution';
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const md = exec.vu.metrics.metadata;
  md.trace_id = 'abc';
  http.get(`${__ENV.BASE}/`);
  const seen = JSON.stringify(md);
  delete md.trace_id;
  check(null, {
    [`metrics keys ${Object.keys(exec.vu.metrics).sort()}, metadata while set ${seen}, after delete ${JSON.stringify(md)}`]: () => true,
  });
}
