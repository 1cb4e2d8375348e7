import { pong } from './cycle-b.js';
export function ping(n) { return n <= 0 ? 'a' : 'a' + pong(n - 1); }
