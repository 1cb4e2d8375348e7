// A SharedArray whose function returns no array is an init error.
import { SharedArray } from 'k6/data';

const bad = new SharedArray('bad', function () { return 42; });

export default function () {}
