// An async setup() that throws: k6 logs the rejection as "Uncaught (in
// promise)" and the Error's stack, without hint or source, and exits 255
// (k6 gives the rejection no exit code of its own).
// compat:log
export const options = { iterations: 1 };

export async function setup() {
  await Promise.resolve();
  throw new Error('async setup failed');
}

export default function () {}
