// TypeScript: types, interfaces and enums are stripped; imports work.
import http from 'k6/http';
import { check } from 'k6';
import { double } from './lib/math.ts';

interface Item { id: number; tag: string }
enum Kind { A = 'a', B = 'b' }

export const options = { iterations: 2 };

export default function (): void {
  const res = http.get(`${__ENV.BASE}/json`);
  const items = res.json('items') as unknown as Item[];
  const first: Item = items[0];
  check(first, {
    'typed id': (i: Item) => i.id === 1,
    'enum value': () => Kind.B === 'b',
    'imported ts function': () => double(21) === 42,
  });
}
