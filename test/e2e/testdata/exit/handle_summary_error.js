// handleSummary throws: the error is logged and the default summary is
// printed instead; the run itself succeeded.
export const options = { iterations: 2 };

export default function () {}

export function handleSummary() {
  throw new Error('summary template missing');
}
