// The TextEncoder and TextDecoder globals k6 provides.
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const b = new TextEncoder().encode('Zürich');
  check(null, {
    [`utf-8 bytes ${Array.from(b).join(',')}`]: () => true,
    'round trip': () => new TextDecoder().decode(b) === 'Zürich',
  });
}
