// An import of a missing local file: exit 107.
import { x } from './lib/nope.js';

export default function () { x(); }
