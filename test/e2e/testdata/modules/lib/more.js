import { add } from './math.js';

export function twice(x) {
  return add(x, x);
}

export default 'the-label';
