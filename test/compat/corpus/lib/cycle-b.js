import { ping } from './cycle-a.js';
export function pong(n) { return n <= 0 ? 'b' : 'b' + ping(n - 1); }
