// Issue 25: the namespace of k6/http holds k6's OCSP_* constants and no
// default key; the default import still is the module's object.
import * as ns from 'k6/http';
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const ocsp = Object.keys(ns).filter((k) => k.startsWith('OCSP_')).map((k) => ns[k]).sort();
  check(null, {
    [`names: ${Object.keys(ns).sort().join(',')}`]: () => true,
    [`OCSP values: ${ocsp.join(',')}`]: () => true,
    [`default in namespace: ${'default' in ns}, default import has get: ${typeof http.get}`]: () => true,
  });
}
