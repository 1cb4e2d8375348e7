// Init-context restrictions: sleep() is allowed nowhere but VU code? k6
// decides; the result is recorded.
import { sleep } from 'k6';

sleep(0.01);

export const options = { iterations: 1 };

export default function () {}
