// params.compression compresses the request body with gzip, deflate (the
// zlib format), br or zstd, or a comma-separated list of them applied in
// order: the server gets k6's very bytes, Content-Encoding and
// Content-Length, and decodes the body the script gave.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

const BODY = 'hello hello hello';
// What k6 v2.2.0 sent for BODY, as the server saw it.
const WIRE = {
  'gzip': '1f8b08000000000000ffca48cdc9c957402201010000ffff8088f9e511000000',
  'deflate': '789cca48cdc9c957402201010000ffff3a2e067d',
  'br': '1b10000024406a1064eaf09c1e',
  'zstd': '28b52ffd040089000068656c6c6f2068656c6c6f2068656c6c6fa2ed1e0c',
};

export default function () {
  for (const [name, hex] of Object.entries(WIRE)) {
    const j = http.post(`${__ENV.BASE}/decode`, BODY, { compression: name }).json();
    check(j, {
      [`${name}: Content-Encoding ${name}`]: (x) => x.ce === name,
      [`${name}: k6's bytes`]: (x) => x.hex === hex,
      [`${name}: Content-Length is the compressed length`]: (x) => x.content_length === hex.length / 2 && x.wire === hex.length / 2,
      [`${name}: decodes to the body`]: (x) => x.body === BODY,
    });
  }
  const lists = {
    'gzip, deflate': 'gzip, deflate',
    ' deflate ,gzip ': 'deflate, gzip',
    'br,zstd,gzip,deflate': 'br, zstd, gzip, deflate',
    'gzip,gzip': 'gzip, gzip',
  };
  for (const [given, sent] of Object.entries(lists)) {
    const j = http.post(`${__ENV.BASE}/decode`, BODY, { compression: given }).json();
    check(j, {
      [`"${given}": sent as ${sent}`]: (x) => x.ce === sent,
      [`"${given}": decodes to the body`]: (x) => x.body === BODY,
    });
  }
  const arr = http.post(`${__ENV.BASE}/decode`, BODY, { compression: ['gzip', 'br'] }).json();
  check(arr, { 'an array reads as its string': (x) => x.ce === 'gzip, br' && x.body === BODY });
  for (const blank of ['', '   ']) {
    const j = http.post(`${__ENV.BASE}/decode`, BODY, { compression: blank }).json();
    check(j, { [`"${blank}": sent as it is`]: (x) => x.ce === '' && x.body === BODY && x.wire === BODY.length });
  }
}
