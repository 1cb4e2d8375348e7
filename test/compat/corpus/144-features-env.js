// Issue #9: K6_FEATURES, the environment form of --features.
// compat:env K6_FEATURES=native-histograms
export const options = { iterations: 1 };

export default function () {}
