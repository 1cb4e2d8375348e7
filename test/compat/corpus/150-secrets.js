// Issue #9 (if cheap): k6/secrets with no secret source configured.
import secrets from 'k6/secrets';
import { check } from 'k6';

export const options = { iterations: 1 };

export default async function () {
  let msg = 'none';
  try { await secrets.get('missing'); } catch (e) { msg = 'threw'; }
  check(null, { [`get without a source: ${msg}`]: () => true });
}
