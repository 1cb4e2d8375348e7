// externally-controlled was removed in k6 v2: a configuration error.
export const options = { scenarios: { ext: { executor: 'externally-controlled', vus: 1, maxVUs: 2, duration: '1s' } } };

export default function () {}
