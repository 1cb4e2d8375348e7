// open() and k6/experimental/fs's open take a file:// URL as k6 does: the
// prefix is cut off and the rest is a path as written, absolute or
// relative to the script (no host, no percent-decoding). A file that does
// not hold the size its file system reports is an input/output error in
// both, as in k6, whose file cache refuses it: /proc files, and so
// /proc/self/environ, the load generator's environment.
import { open as fsOpen } from 'k6/experimental/fs';
import { check } from 'k6';

const text = open('./data/text.txt');
const passwd = open('/etc/passwd');

function attempt(f) {
  try {
    return 'ok ' + f();
  } catch (e) {
    return String(e).includes('input/output error') ? 'input/output error' : 'failed';
  }
}

const opened = {
  'absolute URL': attempt(() => open('file:///etc/passwd') === passwd),
  'absolute URL, binary': attempt(() => open('file:///etc/passwd', 'b').byteLength === passwd.length),
  'relative URL': attempt(() => open('file://data/text.txt') === text),
  'relative URL with dot': attempt(() => open('file://./data/text.txt') === text),
  'host part': attempt(() => open('file://localhost/etc/passwd').length),
  'percent-encoded': attempt(() => open('file://data/te%78t.txt').length),
  'upper-case scheme': attempt(() => open('FILE:///etc/passwd').length),
  '/proc/self/environ': attempt(() => open('/proc/self/environ').length),
  '/proc/self/environ URL': attempt(() => open('file:///proc/self/environ').length),
  '/proc/self/status': attempt(() => open('/proc/self/status').length),
};

async function fsAttempt(path) {
  try {
    const f = await fsOpen(path);
    const st = await f.stat();
    return `ok ${st.name} ${st.size}`;
  } catch (e) {
    return `${typeof e} ${e.name} ${String(e).includes('input/output error') ? 'input/output error' : 'failed'}`;
  }
}

const fsOpened = {
  'absolute URL': (await fsAttempt('file:///etc/passwd')) === `ok passwd ${passwd.length}`,
  'relative URL': await fsAttempt('file://data/text.txt'),
  'host part': await fsAttempt('file://localhost/etc/passwd'),
  '/proc/self/environ': await fsAttempt('/proc/self/environ'),
  '/proc/self/environ URL': await fsAttempt('file:///proc/self/environ'),
};

export const options = { iterations: 1 };

export default function () {
  for (const [k, v] of Object.entries(opened)) {
    check(null, { [`open ${k}: ${v}`]: () => true });
  }
  for (const [k, v] of Object.entries(fsOpened)) {
    check(null, { [`fs.open ${k}: ${v}`]: () => true });
  }
}
