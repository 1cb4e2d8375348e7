export const options = { iterations: 1 };

export function setup() {
  throw new Error('setup could not log in');
}

export default function () {
  console.log('DEFAULT-RAN');
}

export function teardown() {
  console.log('TEARDOWN-RAN');
}
