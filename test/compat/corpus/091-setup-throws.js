// An exception in setup ends the run with exit 107.
export const options = { iterations: 2 };

export function setup() {
  throw new Error('setup failed on purpose');
}

export default function () {}
