// handleSummary() outlives its 1 s timeout.
export const options = { vus: 1, iterations: 3, handleSummaryTimeout: '1s' };

export default function () {}

export function handleSummary() {
  const end = Date.now() + 5000;
  while (Date.now() < end) { /* busy */ }
  return { stdout: 'HANDLE-SUMMARY-DONE\n' };
}
