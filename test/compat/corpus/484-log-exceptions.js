// An iteration's exception as k6 logs it: the thrown value, then one
// "\tat FUNCTION (file:///…:LINE:COL(PC))" line per frame, with executor,
// hint="script exception", scenario and source=stacktrace. An Error
// thrown two calls deep, one thrown in an imported module, a thrown
// string and a thrown object, one per iteration.
// compat:log
import { fromModule } from './lib/throws.js';

export const options = { iterations: 4 };

function inner() {
  throw new Error('two calls deep');
}

function outer() {
  inner();
}

export default function () {
  switch (__ITER) {
    case 0:
      outer();
      break;
    case 1:
      fromModule();
      break;
    case 2:
      throw 'a thrown string';
    default:
      throw { a: 1, b: 'two' };
  }
}
