// --no-summary was removed in k6 v2.
// compat:args --no-summary
export const options = { iterations: 1 };

export default function () {}
