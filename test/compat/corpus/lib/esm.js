export const PI = 3.14;
export function add(a, b) { return a + b; }
export default function greet(n) { return `hello ${n}`; }
