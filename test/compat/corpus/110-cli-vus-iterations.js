// -u and -i override the script's scenarios with a default
// shared-iterations scenario.
// compat:args -u 2 -i 5
export const options = { scenarios: { ignored: { executor: 'per-vu-iterations', vus: 1, iterations: 1 } } };

export default function () {}
