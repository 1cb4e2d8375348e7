// Issue 25 (the jslib.k6.io sweep): exec.test.options holds the scenario
// the shortcut options make, as in k6: k6-utils' getCurrentStageIndex and
// tagWithCurrentStageIndex read its stages. In setup, exec.scenario throws
// a GoError.
import exec from 'k6/execution';
import { check, sleep } from 'k6';

export const options = { stages: [{ duration: '0.5s', target: 1 }] };

export function setup() {
  let name = '';
  try {
    exec.scenario.name;
  } catch (e) {
    name = e.name;
  }
  check(null, { [`exec.scenario in setup throws a ${name}`]: () => true });
}

export default function () {
  sleep(0.2);
  if (exec.vu.iterationInScenario > 0) return;
  const sc = exec.test.options.scenarios;
  check(sc, {
    [`scenarios: ${Object.keys(sc)}, executor ${sc.default.executor}, stages ${JSON.stringify(sc.default.stages)}`]: () => true,
  });
}
