// An exception in handleSummary(): k6 logs its stack with hint="script
// exception" and source=stacktrace, prints the default summary instead
// and exits 0.
// compat:log
export const options = { iterations: 2 };

export default function () {}

export function handleSummary() {
  throw new Error('summary failed');
}
