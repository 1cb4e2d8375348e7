// A TypeScript script whose iteration throws on line 13.
interface Point {
  x: number;
  y: number;
}

export const options = { iterations: 1 };

const norm = (p: Point): number => Math.sqrt(p.x * p.x + p.y * p.y);

export default function (): void {
  const n: number = norm({ x: 3, y: 4 });
  if (n === 5) throw new Error(`typed failure ${n}`);
}
