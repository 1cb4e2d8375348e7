// Issue #9: http.file() values make a multipart/form-data body.
import http from 'k6/http';
import { check } from 'k6';

const bin = open('./data/bytes.bin', 'b');

export const options = { iterations: 1 };

export default function () {
  const res = http.post(`${__ENV.BASE}/multipart`, {
    field: 'value',
    upload: http.file('file contents', 'note.txt', 'text/plain'),
    blob: http.file(bin, 'bytes.bin'),
  });
  check(res, {
    [`status ${res.status}`]: () => true,
    'field': (r) => r.json('fields.field') === 'value',
    'text file': (r) => r.json('files.upload.filename') === 'note.txt' && r.json('files.upload.content') === 'file contents',
    [`binary file ${res.json('files.blob.size')} ${res.json('files.blob.content_type')}`]: () => true,
  });
}
