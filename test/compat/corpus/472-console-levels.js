// The console's levels in k6's logfmt layout: level words info, warning,
// error; a message quoted only when it holds more than letters, digits
// and -._/@^+, escaped as Go quotes it; msg= left out when empty;
// console.debug hidden without --verbose.
// compat:console
export const options = { iterations: 1 };

export default function () {
  console.log('plain');
  console.info('two words');
  console.warn('careful', 42);
  console.error('bad');
  console.debug('hidden');
  console.log('');
  console.log('multi\nline\ttab "quoted" back\\slash');
  console.log('a-Z_0.9/@^+');
  console.log('é unicode ✓');
  console.log('=', 'k=v');
}
