// Issue #9: k6/timers as a module: setTimeout, clearTimeout, setInterval,
// clearInterval.
import { setTimeout, clearTimeout, setInterval, clearInterval } from 'k6/timers';
import { check } from 'k6';

export const options = { iterations: 1 };

export default async function () {
  let ticks = 0;
  let cancelled = true;
  const t = setTimeout(() => { cancelled = false; }, 10);
  clearTimeout(t);
  await new Promise((resolve) => {
    const id = setInterval(() => {
      ticks++;
      if (ticks === 3) { clearInterval(id); resolve(); }
    }, 5);
  });
  check(null, { 'interval ran 3 times': () => ticks === 3, 'cleared timeout never ran': () => cancelled });
}
