// With --verbose, console.debug writes a line of level debug.
// compat:console
// compat:args --verbose
export const options = { iterations: 1 };

export default function () {
  console.debug('shown', { v: [1] });
}
