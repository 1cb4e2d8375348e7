// check() in the init context.
import { check } from 'k6';

check(null, { 'init check': () => true });

export const options = { iterations: 1 };

export default function () {}
