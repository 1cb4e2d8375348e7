// console.log of built-in objects, as k6 v2.2.0 writes them: Map, Set,
// RegExp, Promise and DataView as {}, a Date as its ISO string in quotes,
// Errors as "Name: message", class instances as their own keys, cycles as
// [Circular], typed arrays and ArrayBuffers with their contents, toJSON
// and symbol keys ignored, getters read.
// compat:console
export const options = { iterations: 1 };

class Point {
  constructor() { this.x = 1; this.y = 2; }
  get z() { return 3; }
}
class MyError extends Error {
  constructor(m) { super(m); this.name = 'MyError'; }
}

export default function () {
  console.log('top', new Map([[1, 2]]), new Set([1]), new Date(0), /x/g, new Error('boom'), new MyError('m'));
  console.log('inside', { m: new Map(), s: new Set(), d: new Date(0), bad: new Date(NaN), r: /x/, e: new TypeError('tt'), p: Promise.resolve(1) });
  console.log('class', new Point(), { p: new Point() });
  const c = { name: 'c' };
  c.self = c;
  c.arr = [c];
  const shared = { v: 1 };
  console.log('cycles', c, { a: shared, b: shared });
  console.log('tojson', { toJSON() { return 'J'; }, x: 1 });
  console.log('getter', { get g() { return 42; } }, Object.defineProperty({}, 'hidden', { value: 1 }));
  console.log('symbols', { [Symbol('s')]: 1, a: Symbol('v') }, Symbol('top'));
  console.log('binary', new Uint8Array([1, 2, 255]), { b: new ArrayBuffer(3), f: new Float64Array([1.5, -0]), i: new Int16Array(0) },
    new Uint8ClampedArray([7]), new BigInt64Array(1), new DataView(new ArrayBuffer(2)));
  console.log('wrappers', new String('ab'), { n: new Number(3), b: new Boolean(false) }, Object.create(null));
  console.log('arrays', Object.assign([1, 2], { extra: 3 }), (function () { return arguments; })(1, 2), new Proxy([1, 2], {}));
  console.log('functions', function f() {}, () => 1, { m() {} });
  try {
    console.log('never', { get b() { throw new Error('getter boom'); } });
  } catch (e) {
    console.log('caught', String(e));
  }
}
