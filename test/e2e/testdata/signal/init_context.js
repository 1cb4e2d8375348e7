// The init context of every VU, the first included (the one that reads
// the options), busy-waits for 20 s: a signal must not wait for it.
console.log('INIT-SLOW ' + __VU);
const end = Date.now() + 20000;
while (Date.now() < end) { /* busy */ }

export default function () { console.log('DEFAULT-RAN'); }
