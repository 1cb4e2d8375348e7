export function greet(x) { return 'hello ' + x; }
