// k6/browser imported by a script whose scenario has no browser option:
// it loads, and iterations that do not use it run, as in k6.
import { browser } from 'k6/browser';

export const options = { iterations: 1 };

export default function () {}
