// A failure recorded at the start of a long iteration must reach the
// thresholds while the iteration still runs: the first evaluation (2 s)
// aborts the test, 7 s before the iteration would end. WAIT=sleep waits
// in sleep(9), WAIT=timer in a 9 s setTimeout awaited by the iteration.
// handleSummary writes the test run's duration to OUT.
import { sleep } from 'k6';
import { Rate } from 'k6/metrics';

const ok = new Rate('ok');

export const options = {
  scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 1 } },
  thresholds: { ok: [{ threshold: 'rate>0.5', abortOnFail: true }] },
};

export default async function () {
  ok.add(false);
  if (__ENV.WAIT === 'timer') {
    await new Promise((resolve) => setTimeout(resolve, 9000));
  } else {
    sleep(9);
  }
}

export function handleSummary(data) {
  return { [__ENV.OUT]: JSON.stringify({ testRunDurationMs: data.state.testRunDurationMs }) };
}
