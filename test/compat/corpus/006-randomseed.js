// randomSeed() makes Math.random repeatable within a run.
import { randomSeed, check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  randomSeed(42);
  const a = [Math.random(), Math.random(), Math.random()];
  randomSeed(42);
  const b = [Math.random(), Math.random(), Math.random()];
  check(null, {
    'same seed, same sequence': () => a.every((x, i) => x === b[i]),
    'values in [0,1)': () => a.every((x) => x >= 0 && x < 1),
  });
}
