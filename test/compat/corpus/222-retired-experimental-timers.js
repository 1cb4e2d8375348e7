// Issue 37, bug 5: k6/experimental/timers graduated to the global timers. Importing it fails
// with k6 v2.2.0's explanation of what to do instead and exit 107, not
// with "unknown module".
// compat:messages
// compat:log
import { setTimeout } from 'k6/experimental/timers';

export const options = { iterations: 1 };

export default function () {}
