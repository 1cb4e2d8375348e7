// A script that imports a k6/ module no binary has: k6 logs one error
// line with no field, "could not initialize" the script as given and
// "could not load JS test" its file URL around its loader's words, and
// exits 107. metronome writes the same line around its own words, which
// name the file, line and column of the import.
// compat:log
import nothing from 'k6/does-not-exist';

export const options = { iterations: 1 };

export default function () {
  nothing();
}
