// jslib.k6.io/sm-screenshots: captureScreenshot with a stand-in page and
// store (no browser, no upload), and the stores' shape.
import * as lib from '{{BASE}}/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function probe() {
  const out = { names: names(lib), loki: names(lib.loki()), gcs: attempt(() => names(lib.gcs())) };
  const uploads = [];
  const page = { screenshot: async (opts) => { uploads.push(['screenshot', opts]); return new Uint8Array([1, 2, 3]).buffer; } };
  const store = { upload: async (buffer, uuid, caption) => { uploads.push(['upload', buffer.byteLength, UUID.test(uuid), caption]); } };
  out.capture = await attemptAsync(async () => { await lib.captureScreenshot(page, { caption: 'home page', fullPage: true, store }); return 'captured'; });
  out.uploads = uploads;
  out.lokiUpload = await attemptAsync(() => lib.loki().upload(new Uint8Array([1]).buffer, 'id', 'c'));
  return out;
}
