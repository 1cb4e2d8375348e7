// k6 v2.1+: a bare -u N runs N VUs × N iterations.
// compat:args -u 3
export default function () {}
