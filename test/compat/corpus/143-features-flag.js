// Issue #9: k6 v2's --features flag with the native-histograms feature.
// compat:args --features=native-histograms
export const options = { iterations: 1 };

export default function () {}
