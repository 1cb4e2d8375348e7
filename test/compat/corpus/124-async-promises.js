// async functions, promises and setTimeout inside iterations.
import { check } from 'k6';

export const options = { iterations: 2 };

function later(v, ms) {
  return new Promise((resolve) => setTimeout(() => resolve(v), ms));
}

export default async function () {
  const order = [];
  const p = later('b', 20).then((v) => order.push(v));
  order.push('a');
  await p;
  const all = await Promise.all([later(1, 5), later(2, 1)]);
  check(null, {
    'order': () => order.join('') === 'ab',
    'all': () => all.join(',') === '1,2',
    'rejection caught': () => true,
  });
  await Promise.reject(new Error('x')).catch(() => order.push('c'));
  check(order, { 'after catch': (o) => o.join('') === 'abc' });
}
