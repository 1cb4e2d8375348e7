// Issue 37, bug 5: k6/experimental/webcrypto graduated to the global crypto. Importing it fails
// with k6 v2.2.0's explanation of what to do instead and exit 107, not
// with "unknown module".
// compat:messages
// compat:log
import { crypto } from 'k6/experimental/webcrypto';

export const options = { iterations: 1 };

export default function () {}
