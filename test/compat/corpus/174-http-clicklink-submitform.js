// Issue #9: response.clickLink() and response.submitForm() on the /html
// page: the link's GET and the form's POST with its fields.
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const page = http.get(`${__ENV.BASE}/html`);
  const link = page.clickLink({ selector: 'a.link' });
  const sent = page.submitForm({ formSelector: '#f', fields: { note: 'changed' } });
  const form = sent.json('form') || {};
  check(null, {
    [`link ${link.status} ${link.url.replace(__ENV.BASE, 'BASE')}`]: () => true,
    [`form ${sent.status} ${sent.json('method')} ${sent.json('path')}`]: () => true,
    [`fields ${Object.keys(form).sort().map((k) => k + '=' + form[k]).join('&')}`]: () => true,
  });
}
