// An extension module this binary lacks, one the extension registry
// lists (k6/x/redis) and one it does not: both tools stop at the import
// with exit 107 (k6 with its automatic extension resolution off, which
// the suite always sets). metronome's message names the module that
// provides k6/x/redis and the metronome build line.
import redis from 'k6/x/redis';
import nobody from 'k6/x/nobody-lists-this';

export const options = { iterations: 1 };

export default function () {
  redis.ping();
  nobody.call();
}
