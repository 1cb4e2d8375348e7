// A bare --secret-source=url takes its configuration from the
// K6_SECRET_SOURCE_URL_* variables (URL_TEMPLATE, HEADER_<NAME>,
// RESPONSE_PATH, …); the flag's keys and a config=FILE JSON file (with
// headers and a timeout in k6's duration syntax) lie over them, the
// flag's over the file's whatever the order.
// compat:env K6_SECRET_SOURCE_URL_URL_TEMPLATE=${BASE}/secret/auth/{key} K6_SECRET_SOURCE_URL_HEADER_AUTHORIZATION=t0k
// compat:args --secret-source=url
// compat:args --secret-source=url=urlTemplate=${BASE}/secret/json/{key},config=data/url-secret-source.json,name=fromfile
import secrets from 'k6/secrets';
import { check } from 'k6';

export const options = { iterations: 1 };

export default async function () {
  for (const [source, want] of [['url', 'auth-k'], ['fromfile', 'json-k']]) {
    let out;
    try {
      out = String((await secrets.source(source).get('k')) === want);
    } catch (e) {
      out = `rejects ${e}`;
    }
    check(null, { [`${source}: ${out}`]: () => true });
  }
}
