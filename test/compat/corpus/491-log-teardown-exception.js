// An exception in teardown(): k6 logs its stack with hint="script
// exception" and source=stacktrace, no executor or scenario, after the
// iterations ran and the summary was printed, and exits 107.
// compat:log
export const options = { iterations: 2 };

export default function () {}

export function teardown() {
  throw new Error('teardown failed');
}
