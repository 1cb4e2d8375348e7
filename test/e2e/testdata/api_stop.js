import { sleep } from 'k6';
export const options = { vus: 1, duration: '30s' };
export default function () { sleep(0.1); }
