// group() in the init context.
import { group } from 'k6';

group('init', () => {});

export const options = { iterations: 1 };

export default function () {}
