// A script that does not compile: k6 logs one error line with no field,
// "could not initialize" the script as given and "could not load JS test"
// its file URL around its parser's words, and exits 107 without running
// anything. metronome writes the same line around its own words, which
// keep the file, line and column.
// compat:log
export const options = { iterations: 1 };

export default function () {
  let x = ;
}
