export const options = { iterations: 1 };

export default function () {}

export function teardown() {
  throw new Error('teardown could not clean up');
}
