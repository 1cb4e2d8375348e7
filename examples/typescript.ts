// TypeScript runs as is: metronome strips the types with esbuild and error
// positions point at this file's lines.
import http from 'k6/http';
import { check } from 'k6';

interface Target {
  base: string;
  path: string;
}

const target: Target = { base: __ENV.TARGET || 'http://127.0.0.1:8080', path: '/' };

export const options = { vus: 2, duration: '5s' };

export default function (): void {
  const res = http.get(`${target.base}${target.path}`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
