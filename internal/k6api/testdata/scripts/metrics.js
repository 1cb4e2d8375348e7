// Samples an xk6 extension pushes reach metronome's metrics engine: from
// another goroutine (work), from the VU's (record, and the v1 counter),
// sent on State.Samples directly (direct), and refused once the VU's
// context is done (late); record and direct push probe_own too, a metric
// of a registry of each module instance's own. Teardown asks a VU of main,
// done with its iterations, for its State (keptState). probe_latency is a latency trend: the pushes of
// the open-model scenario record corrected_latency{metric:probe_latency}
// too. THRESHOLD=fail makes one threshold fail.
import { work, timed, record, direct, late, lateDropped, keep, keptState } from 'k6/x/probe';
import counter from 'k6/x/probev1/count';
import { sleep } from 'k6';

export const options = {
  latencyTrends: ['probe_latency'],
  summaryTrendStats: ['avg', 'min', 'max', 'count'],
  scenarios: {
    main: { executor: 'per-vu-iterations', vus: 2, iterations: 3, exec: 'main' },
    open: { executor: 'constant-arrival-rate', rate: 5, timeUnit: '1s', duration: '1s', preAllocatedVUs: 5, exec: 'open' },
    cut: { executor: 'constant-vus', vus: 1, duration: '1s', gracefulStop: '0s', exec: 'cut' },
  },
  thresholds: {
    'probe_ops{op:work}': [__ENV.THRESHOLD === 'fail' ? 'count<6' : 'count==6'],
    'probe_ops{kind:x}': ['count==12'],
    probe_latency: ['p(95)>=10'],
    probev1_count: ['count==18'],
    'probe_latency{op:timed}': ['min>=20'],
    'corrected_latency{metric:probe_latency}': ['min>=20'],
  },
};

export function setup() { direct(); direct(); }

export async function main() {
  await work(10);
  record(2, { kind: 'x' });
  counter.add(3);
  keep();
  sleep(0.1);
}

export function open() {
  if (!timed(20)) throw new Error('the push was refused');
}

export async function cut() { await late(); }

export function teardown() {
  sleep(0.5); // time for the refused push's goroutine to count it
  console.log('late dropped', lateDropped());
  console.log('kept state', keptState());
}
