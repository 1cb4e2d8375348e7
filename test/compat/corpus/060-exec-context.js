// k6/execution in an iteration: scenario, VU and test information.
import exec from 'k6/execution';
import { check } from 'k6';

export const options = { scenarios: { main: { executor: 'shared-iterations', vus: 1, iterations: 3, tags: { st: 'x' } } } };

export default function () {
  const s = exec.scenario;
  check(null, {
    [`scenario ${s.name} ${s.executor} iter ${s.iterationInInstance}/${s.iterationInTest}`]: () => true,
    [`vu ${exec.vu.idInInstance}/${exec.vu.idInTest} iter ${exec.vu.iterationInInstance}/${exec.vu.iterationInScenario}`]: () => true,
    'startTime is a past epoch ms': () => s.startTime > 1.6e12 && s.startTime <= Date.now(),
    'progress in [0,1]': () => s.progress >= 0 && s.progress <= 1,
    [`vu tag scenario ${exec.vu.tags.scenario}`]: () => true,
    [`options vus ${exec.test.options.scenarios.main.vus}`]: () => true,
  });
}
