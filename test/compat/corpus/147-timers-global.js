// Global setTimeout/clearTimeout/setInterval without an import.
import { check } from 'k6';

export const options = { iterations: 1 };

export default async function () {
  let n = 0;
  await new Promise((resolve) => {
    const id = setInterval(() => { if (++n === 2) { clearInterval(id); resolve(); } }, 5);
  });
  check(n, { 'two ticks': (x) => x === 2 });
}
