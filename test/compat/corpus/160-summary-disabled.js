// --summary-mode=disabled: no summary, and still an export file.
// compat:args --summary-mode=disabled
export const options = { iterations: 2 };

export default function () {}
