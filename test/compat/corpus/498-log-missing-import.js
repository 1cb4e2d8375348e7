// A script that imports a local file that is not there: k6 logs one error
// line with no field, "could not initialize" the script as given and
// "could not load JS test" its file URL around its loader's words, and
// exits 107. metronome writes the same line around its own words, which
// name the file, line and column of the import and the missing path.
// compat:log
import { helper } from './lib/no-such-file.js';

export const options = { iterations: 1 };

export default function () {
  helper();
}
