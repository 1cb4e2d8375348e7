// handleSummary() busy-waits for 20 s (its timeout is the default 120 s).
export const options = { vus: 1, iterations: 3 };

export default function () {}

export function handleSummary() {
  console.log('SUMMARY-START');
  const end = Date.now() + 20000;
  while (Date.now() < end) { /* busy */ }
  return { stdout: 'HANDLE-SUMMARY-DONE\n' };
}
