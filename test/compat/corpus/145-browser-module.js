// k6/browser is out of metronome's scope; k6 needs a browser scenario
// option. Without one, k6 fails at init; metronome must name the module.
import { browser } from 'k6/browser';

export const options = { iterations: 1 };

export default function () {}
