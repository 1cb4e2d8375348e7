// console.log of objects and arrays: k6's one-line notation (bare keys,
// strings quoted but not escaped, undefined as null, functions as
// [object Function]), with no depth or length limit, in the logfmt
// layout k6 writes when stderr is not a terminal.
// compat:console
export const options = { iterations: 1 };

export default function () {
  console.log('bad', { a: 1, b: 'x', c: [1, 2, { d: null }], e: undefined, f: function g() {} }, [1, 'a']);
  console.log('deep', { a: { b: { c: { d: { e: { f: { g: { h: [[[1]]] } } } } } } } });
  const big = [];
  for (let i = 0; i < 120; i++) big.push(i);
  const wide = {};
  for (let i = 0; i < 25; i++) wide['k' + i] = 'v' + i;
  console.log('long', big, wide);
  console.log('strings', 'top "q"\nline', { s: 'in "q"\nline\ttab\\' }, ['a', ['b']]);
  console.log('keys', { 'a-b': 1, 1: 2, 'with space': 3, '': 4, 'é': 5, '01': 6, '-1': 7 });
  console.log('numbers', -0, NaN, Infinity, 1e21, 0.1, { n: [-0, NaN, -Infinity, 1e21, 1e-7, 2 ** 64] }, 10n, { b: 10n });
  console.log('empty', {}, [], { o: {}, a: [] }, [1, , 3], { s: [, ,] });
  console.log('plain', 1, true, null, undefined, { t: true, f: false, n: null });
}
