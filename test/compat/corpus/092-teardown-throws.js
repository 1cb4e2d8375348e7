// An exception in teardown: the iterations counted, exit 107.
export const options = { iterations: 2 };

export default function () {}

export function teardown() {
  throw new Error('teardown failed on purpose');
}
