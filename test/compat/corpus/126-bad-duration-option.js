// A duration that does not parse in a scenario: exit 104.
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 1, duration: '1x' } } };

export default function () {}
