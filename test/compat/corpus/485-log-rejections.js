// A rejected promise no one handles, as k6 logs it: "Uncaught (in
// promise)" and an Error's stack, or the reason as text, with executor
// and scenario only. An Error, a number, a string, and an async
// function's rejection.
// compat:log
export const options = { iterations: 4 };

async function failing() {
  throw new Error('async rejected');
}

export default function () {
  switch (__ITER) {
    case 0:
      Promise.reject(new Error('rejected'));
      break;
    case 1:
      Promise.reject(42);
      break;
    case 2:
      Promise.reject('plain reason');
      break;
    default:
      failing();
  }
}
