// An unknown key in a scenario is a configuration error.
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: 1, speed: 'fast' } } };

export default function () {}
