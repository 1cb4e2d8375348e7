// Issue 37, bug 5: k6/experimental/redis was removed (its successor is the extension k6/x/redis). Importing it fails
// with k6 v2.2.0's explanation of what to do instead and exit 107, not
// with "unknown module".
// compat:messages
// compat:log
import redis from 'k6/experimental/redis';

export const options = { iterations: 1 };

export default function () {}
