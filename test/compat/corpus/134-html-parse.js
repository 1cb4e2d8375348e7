// Issue #9: k6/html parseHTML and the Selection API.
import { parseHTML } from 'k6/html';
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const doc = parseHTML(http.get(`${__ENV.BASE}/html`).body);
  const items = doc.find('li.item');
  check(doc, {
    [`title ${doc.find('title').text()}`]: () => true,
    [`items ${items.size()}`]: () => true,
    [`attr ${items.eq(1).attr('data-id')}`]: () => true,
    [`first ${items.first().text()} last ${items.last().text()}`]: () => true,
    [`map ${items.map((i, el) => el.textContent()).join('|')}`]: () => true,
    [`filter ${items.filter('.odd').text()}`]: () => true,
    [`children ${doc.find('#outer').children().size()}`]: () => true,
    [`val ${doc.find('input[name=user]').val()}`]: () => true,
    [`html ${doc.find('#outer p').first().html()}`]: () => true,
    [`serialize ${doc.find('form').serialize()}`]: () => true,
  });
}
