// Issue #9: the global WebCrypto object: getRandomValues and randomUUID.
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const a = new Uint8Array(32);
  const same = crypto.getRandomValues(a);
  const id = crypto.randomUUID();
  check(null, {
    'getRandomValues fills and returns its argument': () => same === a && a.some((x) => x !== 0),
    'randomUUID is a v4 UUID': () => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id),
  });
}
