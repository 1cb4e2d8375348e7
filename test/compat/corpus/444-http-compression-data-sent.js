// data_sent counts the compressed body: 100 kB of one letter gzip to a
// little over a hundred bytes, so the iteration sends far less than 5 kB
// (headers included), while the same body uncompressed sends more than
// 100 kB. Both programs send the same User-Agent, so the counts match
// to the byte.
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  userAgent: 'compat',
  scenarios: {
    gzip: { executor: 'per-vu-iterations', iterations: 1, vus: 1, exec: 'gzipped' },
    plain: { executor: 'per-vu-iterations', iterations: 1, vus: 1, exec: 'plain' },
  },
  thresholds: {
    'data_sent{scenario:gzip}': ['count < 5000'],
    'data_sent{scenario:plain}': ['count > 100000'],
  },
};

const BODY = 'a'.repeat(100000);

export function gzipped() {
  check(http.post(`${__ENV.BASE}/decode`, BODY, { compression: 'gzip' }).json(), { 'gzip: 137 bytes on the wire': (x) => x.wire === 137 && x.body === BODY });
}

export function plain() {
  check(http.post(`${__ENV.BASE}/decode`, BODY).json(), { 'plain: all of it': (x) => x.wire === 100000 });
}
