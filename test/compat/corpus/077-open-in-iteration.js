// open() outside the init context is an error thrown in the iteration;
// the run continues and exits 0.
import { check } from 'k6';

export const options = { iterations: 2 };

export default function () {
  let threw = false;
  try { open('./data/text.txt'); } catch (e) { threw = true; }
  check(threw, { 'open in VU code throws': (t) => t === true });
}
