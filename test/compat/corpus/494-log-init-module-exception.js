// An exception at the top level of an imported module's init: k6 logs
// the Error's stack, whose frame names the module's file, with
// hint="script exception" and source=stacktrace, and exits 107.
// compat:log
import { ready } from './lib/init-throws.js';

export const options = { iterations: 1 };

export default function () {
  ready();
}
