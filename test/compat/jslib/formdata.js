// jslib.k6.io/formdata: build a multipart body of a field, a file and
// bytes, and send it to the loopback server, which parses it.
import http from 'k6/http';
import * as lib from '{{BASE}}/index.js';

function probe() {
  const fd = new lib.FormData();
  fd.append('field', 'value');
  fd.append('file', http.file('file contents', 'a.txt', 'text/plain'));
  fd.append('bytes', http.file(new Uint8Array([104, 105]).buffer, 'b.bin'));
  const body = fd.body();
  const text = String.fromCharCode.apply(null, new Uint8Array(body)).split(fd.boundary).join('BOUNDARY');
  const res = http.post(`${__ENV.ECHO}/multipart`, body, { headers: { 'Content-Type': 'multipart/form-data; boundary=' + fd.boundary } });
  return { names: names(lib), boundary: fd.boundary.startsWith('------RWWorkerFormDataBoundary'), body: text, echoed: res.json() };
}
