// __ENV from -e flags; a scenario env overlays the global one.
// compat:args -e GREETING=hi -e EMPTY= -e SPACED=a_b
import { check } from 'k6';

export const options = {
  scenarios: {
    plain: { executor: 'shared-iterations', vus: 1, iterations: 1, exec: 'plain' },
    overlay: { executor: 'shared-iterations', vus: 1, iterations: 1, exec: 'overlay', env: { GREETING: 'scenario' } },
  },
};

export function plain() {
  check(__ENV, { [`plain GREETING=${__ENV.GREETING}`]: () => true, [`EMPTY='${__ENV.EMPTY}'`]: () => true, [`SPACED=${__ENV.SPACED}`]: () => true, 'unset is undefined': (e) => e.NOPE === undefined });
}

export function overlay() {
  check(__ENV, { [`overlay GREETING=${__ENV.GREETING}`]: () => true });
}
