// An exception in setup(): k6 logs its stack with hint="script exception"
// and source=stacktrace, no executor or scenario, and exits 107 without
// running an iteration.
// compat:log
export const options = { iterations: 1 };

export function setup() {
  throw new Error('setup failed');
}

export default function () {}
