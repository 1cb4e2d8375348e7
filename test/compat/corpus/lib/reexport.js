import { add } from './esm.js';
export function again(n) { return add(n, 1); }
export { add };
