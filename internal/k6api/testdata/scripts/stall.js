// An extension's operation against a stalling server: each iteration
// awaits the probe's get, which the extension times into its own Trend,
// probe_op_duration, named in latencyTrends so that corrected_latency
// charges each operation from its intended start. RATE arrivals/s for
// DURATION on VUS VUs.
import { get } from 'k6/x/probe';

export const options = {
  latencyTrends: ['probe_op_duration'],
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
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(99)', 'count'],
};

export default async function () {
  await get(__ENV.TARGET);
}
