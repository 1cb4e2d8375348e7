// An exception at the top level of the init context: k6 logs the Error's
// stack, its frame without a function name, with hint="script exception"
// and source=stacktrace, and exits 107 without running an iteration.
// compat:log
export const options = { iterations: 1 };

const settings = JSON.parse('{"retries": 5}');
if (settings.retries > 3) {
  throw new Error('too many retries: ' + settings.retries);
}

export default function () {}
