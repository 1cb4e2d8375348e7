// --summary-mode=full with an export: the export is the same.
// compat:args --summary-mode=full
import http from 'k6/http';
import { group } from 'k6';

export const options = { iterations: 2 };

export default function () {
  group('g', () => http.get(`${__ENV.BASE}/`));
}
