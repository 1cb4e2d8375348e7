// One iteration that logs at three levels, for the --log-output and
// --log-format tests.
export const options = { iterations: 1, vus: 1 };

export default function () {
  console.log('hi');
  console.warn('careful', 42);
  console.error('bad');
}
