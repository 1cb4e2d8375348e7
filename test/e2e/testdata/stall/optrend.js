// An operation metronome does not know, against a stalling server: each
// iteration performs one operation that the script times itself with a
// Trend of its own, as a Redis or SQL extension times its calls, and
// names in latencyTrends. (The operation is a k6/http request here, the
// one protocol a loopback stall server speaks; its own corrected_latency
// carries no metric tag, so corrected_latency{metric:op_duration} holds
// the Trend's operations alone.) RATE arrivals/s for DURATION on up to
// VUS VUs.
import http from 'k6/http';
import { Trend } from 'k6/metrics';

const op = new Trend('op_duration', true);

export const options = {
  latencyTrends: ['op_duration'],
  scenarios: {
    ops: {
      executor: 'intended-arrival-rate',
      rate: Number(__ENV.RATE),
      timeUnit: '1s',
      duration: __ENV.DURATION,
      preAllocatedVUs: Number(__ENV.VUS),
      maxVUs: Number(__ENV.VUS),
      gracefulStop: '5s',
    },
  },
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
};

export default function () {
  const start = Date.now();
  http.get(__ENV.TARGET);
  op.add(Date.now() - start, { op: 'GET' });
}
