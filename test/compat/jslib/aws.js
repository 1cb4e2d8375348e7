// jslib.k6.io/aws: pure functions only, never a request (no call may reach
// AWS): configuration and its validation, the request signer with a fixed
// date and key (AWS's documented example credentials), and the exported
// error classes.
import * as lib from '{{BASE}}/index.js';

const creds = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const date = new Date(Date.UTC(2013, 4, 24, 0, 0, 0));

// newConfig makes an AWSConfig: up to 0.4.0 its arguments are region, key
// id and secret; later versions take one object.
function newConfig(o) {
  return lib.AWSConfig.length >= 3 ? new lib.AWSConfig(o.region, o.accessKeyId, o.secretAccessKey) : new lib.AWSConfig(o);
}

function probe() {
  const out = { names: names(lib) };
  out.config = attempt(() => {
    const c = newConfig({ region: 'us-east-1', ...creds });
    return [c.region, c.accessKeyId || c.accessKeyID, typeof c.secretAccessKey];
  });
  out.badConfig = [
    attempt(() => newConfig({ region: 'us-east-1' })),
    attempt(() => newConfig({ ...creds })),
    attempt(() => newConfig({ region: 'us-east-1', accessKeyId: 'short', secretAccessKey: 'short' })),
  ];
  if (lib.AWSConfig.fromEnvironment) {
    out.fromEnvironment = attempt(() => names(lib.AWSConfig.fromEnvironment()));
  }
  out.errors = ['InvalidAWSConfigError', 'InvalidSignatureError', 'S3ServiceError', 'AWSError', 'NetworkError']
    .filter((n) => lib[n])
    .map((n) => attempt(() => { const e = new lib[n]('boom', 'Code'); return [e.name, e.message, e instanceof Error]; }));
  if (lib.SignatureV4) {
    const signer = new lib.SignatureV4({ service: 's3', region: 'us-east-1', credentials: creds, uriEscapePath: false, applyChecksum: true });
    // The request names its host as hostname up to 0.9.0, as an endpoint
    // object from 0.10.0 (an Endpoint from 0.12.2).
    const host = 'examplebucket.s3.amazonaws.com';
    const endpoint = lib.Endpoint ? new lib.Endpoint('https://' + host) : { protocol: 'https', hostname: host, port: 443, href: 'https://' + host };
    const request = { method: 'GET', protocol: 'https', hostname: host, endpoint, path: '/test.txt', headers: { Range: 'bytes=0-9' } };
    out.sign = attempt(() => {
      const signed = signer.sign(request, { signingDate: date });
      return [signed.headers.Authorization || signed.headers.authorization, signed.url];
    });
    out.presign = attempt(() => signer.presign({ ...request, headers: {} }, { signingDate: date, expiresIn: 86400 }).url);
  }
  if (lib.signHeaders && lib.URIEncodingConfig) {
    out.signHeaders = attempt(() => {
      const config = newConfig({ region: 'us-east-1', ...creds });
      const headers = { Host: 'examplebucket.s3.amazonaws.com', 'X-Amz-Date': '20130524T000000Z' };
      return lib.signHeaders(headers, date.getTime(), 'GET', '/test.txt', {}, '', config, 's3', new lib.URIEncodingConfig(true, false));
    });
  }
  if (lib.S3Client) {
    out.s3Client = attempt(() => typeof new lib.S3Client(newConfig({ region: 'us-east-1', ...creds })).listBuckets);
  }
  return out;
}
