// A threshold on a metric that no script defines is an error (104).
export const options = { iterations: 1, thresholds: { no_such_metric: ['count>0'] } };

export default function () {}
