// Issue 25: a script that exports no function is refused: k6 says "no
// exported functions in script" and exits 255.
export const options = { iterations: 1 };
