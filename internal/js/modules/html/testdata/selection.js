import { parseHTML } from 'k6/html';
const src = `<!DOCTYPE html><html lang="en"><head><title>T</title></head><body>
<div id="main" class="a b" data-user-id="42" data-flag="true" data-obj='{"x":1}' data-name="bob">
<p class="x">One <b>bold</b></p><p class="y">Two</p><!-- c --><p class="x z">Three</p>
<a href="/1">L1</a><a href="/2" rel="n">L2</a>
</div>
<form id="f"><input name="u" value="ann"><input type="checkbox" name="c" value="1" checked><input type="checkbox" name="c" value="2" checked><input type="checkbox" name="d">
<input type="radio" name="r" checked><select name="s"><option>o1</option><option value="v2" selected>o2</option></select>
<select name="m" multiple><option selected>m1</option><option selected value="mm2">m2</option></select>
<textarea name="t">hello
world</textarea><input type="submit" name="go" value="Go"><input name="dis" disabled value="x"><button name="b" value="bv">B</button></form>
</body></html>`;
export default function () {
  const doc = parseHTML(src);
  const out = {};
  const t = (k, f) => { try { out[k] = f(); } catch (e) { out[k] = 'THROW ' + e; } };
  t('title', () => doc.find('title').text());
  t('pcount', () => doc.find('p').size());
  t('attr', () => doc.find('a').attr('href'));
  t('attrMissing', () => String(doc.find('a').attr('nope')));
  t('attrDef', () => doc.find('a').attr('nope', 'dflt'));
  t('html', () => doc.find('p').html());
  t('htmlEmpty', () => String(doc.find('nothing').html()));
  t('textEmpty', () => JSON.stringify(doc.find('nothing').text()));
  t('children', () => doc.find('#main').children().size());
  t('childrenSel', () => doc.find('#main').children('p').size());
  t('contents', () => doc.find('#main').contents().size());
  t('closest', () => doc.find('b').closest('div').attr('id'));
  t('data', () => { const d = doc.find('#main').data(); return JSON.stringify(Object.keys(d).sort().map(k => [k, d[k]])); });
  t('dataKey', () => JSON.stringify([doc.find('#main').data('userId'), doc.find('#main').data('user-id'), doc.find('#main').data('flag'), doc.find('#main').data('obj'), doc.find('#main').data('nope')]));
  t('each', () => { const a = []; doc.find('p').each(function (i, el) { a.push(i + ':' + typeof el + ':' + el.nodeName()); }); return a.join(','); });
  t('eachRet', () => typeof doc.find('p').each(() => {}));
  t('eq', () => doc.find('p').eq(1).text() + '|' + doc.find('p').eq(-1).text() + '|' + doc.find('p').eq(9).size());
  t('filterSel', () => doc.find('p').filter('.x').size());
  t('filterFn', () => doc.find('p').filter((i, el) => i > 0).size());
  t('filterSelection', () => doc.find('p').filter(doc.find('.z')).size());
  t('first', () => doc.find('p').first().text());
  t('last', () => doc.find('p').last().text());
  t('get', () => doc.find('p').get(0).textContent());
  t('getNeg', () => String(doc.find('p').get(-1) && doc.find('p').get(-1).textContent()));
  t('getOut', () => String(doc.find('p').get(9)));
  t('getAll', () => { const a = doc.find('p').get(); return Array.isArray(a) + ':' + a.length; });
  t('has', () => doc.find('p').has('b').size());
  t('is', () => [doc.find('p').is('.z'), doc.find('p').is('.q'), doc.find('p').is((i, el) => i === 2), doc.find('p').is(doc.find('.y'))].join(','));
  t('map', () => JSON.stringify(doc.find('p').map((i, el) => el.text())));
  t('mapArr', () => JSON.stringify(doc.find('p').map((i, el) => i === 1 ? null : [i, i])));
  t('next', () => doc.find('.y').next().text() + '|' + doc.find('.y').next('a').size());
  t('nextAll', () => doc.find('.y').nextAll().size() + '|' + doc.find('.y').nextAll('a').size());
  t('nextUntil', () => doc.find('.y').nextUntil('a').size() + '|' + doc.find('p').first().nextUntil(doc.find('a')).size() + '|' + doc.find('p').first().nextUntil('a', '.x').size());
  t('not', () => doc.find('p').not('.x').size() + '|' + doc.find('p').not((i) => i === 0).size());
  t('parent', () => doc.find('b').parent().attr('class') + '|' + doc.find('b').parent('div').size());
  t('parents', () => doc.find('b').parents().size() + '|' + doc.find('b').parents('div').size());
  t('parentsUntil', () => doc.find('b').parentsUntil('body').size() + '|' + doc.find('b').parentsUntil('html').size());
  t('prev', () => doc.find('.y').prev().text() + '|' + doc.find('a').last().prev().text());
  t('prevAll', () => doc.find('a').last().prevAll().size() + '|' + doc.find('a').last().prevAll('p').size());
  t('prevUntil', () => doc.find('a').last().prevUntil('.y').size());
  t('serialize', () => doc.find('form').serialize());
  t('serializeArray', () => JSON.stringify(doc.find('form').serializeArray()));
  t('serializeObject', () => { const d = doc.find('form').serializeObject(); return JSON.stringify(Object.keys(d).sort().map(k => [k, d[k]])); });
  t('slice', () => doc.find('p').slice(1).size() + '|' + doc.find('p').slice(0, 2).size() + '|' + doc.find('p').slice(-1).text());
  t('toArray', () => { const a = doc.find('p').toArray(); return a.length + ':' + a[1].text() + ':' + typeof a[1].find; });
  t('val', () => JSON.stringify([doc.find('input[name=u]').val(), doc.find('select[name=s]').val(), doc.find('select[name=m]').val(), doc.find('textarea').val(), doc.find('input[name=r]').val(), doc.find('button').val(), doc.find('p').val(), doc.find('nothing').val()]));
  t('add', () => doc.find('p').add('a').size() + '|' + doc.find('p').add(doc.find('title')).size());
  t('length', () => String(doc.find('p').length));
  t('end', () => { try { return doc.find('p').first().end().size(); } catch (e) { return 'THROW'; } });
  t('badSel', () => doc.find('[[').size());
  const el = doc.find('#main').get(0);
  t('el.nodeName', () => el.nodeName());
  t('el.nodeType', () => el.nodeType());
  t('el.nodeValue', () => String(el.nodeValue()));
  t('el.id', () => el.id());
  t('el.innerHTML', () => doc.find('p').get(0).innerHTML());
  t('el.textContent', () => doc.find('p').get(0).textContent());
  t('el.attributes', () => { const a = el.attributes(); return Object.keys(a).sort().join(',') + '|' + JSON.stringify(Object.keys(a.id)) + '|' + a.id.value + '|' + a.id.name; });
  t('el.firstChild', () => { const c = el.firstChild(); return c.nodeName() + ':' + c.nodeType() + ':' + JSON.stringify(c.nodeValue()); });
  t('el.lastChild', () => el.lastChild().nodeName());
  t('el.childElementCount', () => el.childElementCount());
  t('el.firstElementChild', () => el.firstElementChild().className());
  t('el.lastElementChild', () => el.lastElementChild().textContent());
  t('el.prevSibling', () => { const p = doc.find('.y').get(0); return p.previousSibling().nodeName() + '|' + p.previousElementSibling().className() + '|' + p.nextSibling().nodeName() + '|' + p.nextElementSibling().className(); });
  t('el.parent', () => el.parentElement().nodeName() + '|' + el.parentNode().nodeName());
  t('el.docParent', () => String(doc.find('html').get(0).parentElement()) + '|' + doc.find('html').get(0).parentNode().nodeName());
  t('el.childNodes', () => el.childNodes().length + '|' + el.children().length);
  t('el.classList', () => JSON.stringify(el.classList()));
  t('el.className', () => el.className());
  t('el.lang', () => el.lang() + '|' + doc.find('html').get(0).lang());
  t('el.toString', () => el.toString() + '|' + String(el) + '|' + el.firstChild().toString());
  t('el.hasAttribute', () => el.hasAttribute('id') + '|' + el.hasAttribute('x'));
  t('el.getAttribute', () => el.getAttribute('data-name') + '|' + String(el.getAttribute('x')));
  t('el.getAttributeNode', () => { const a = el.getAttributeNode('id'); return a.name + '=' + a.value + '|' + String(el.getAttributeNode('x')) + '|' + (a.ownerElement && a.ownerElement.id()); });
  t('el.hasAttributes', () => el.hasAttributes() + '|' + doc.find('b').get(0).hasAttributes());
  t('el.hasChildNodes', () => el.hasChildNodes());
  t('el.isSameNode', () => el.isSameNode(doc.find('div').get(0)) + '|' + el.isSameNode(doc.find('p').get(0)));
  t('el.isEqualNode', () => doc.find('a').get(0).isEqualNode(parseHTML('<a href="/1">L1</a>').find('a').get(0)));
  t('el.byClass', () => el.getElementsByClassName('x').length);
  t('el.byTag', () => el.getElementsByTagName('a').length);
  t('el.qs', () => el.querySelector('a').textContent() + '|' + String(el.querySelector('table')));
  t('el.qsa', () => el.querySelectorAll('p').length);
  t('el.contains', () => el.contains(doc.find('b').get(0)) + '|' + el.contains(doc.find('title').get(0)));
  t('el.matches', () => el.matches('div.a') + '|' + el.matches('p'));
  t('el.ns', () => el.namespaceURI() + '|' + el.isDefaultNamespace('http://www.w3.org/1999/xhtml'));
  t('el.ownerDocument', () => el.ownerDocument().nodeName() + ':' + el.ownerDocument().nodeType());
  t('el.selection', () => { try { return el.selection().text().length; } catch (e) { return 'THROW ' + e; } });
  t('el.propType', () => typeof el.nodeName);
  t('a.href', () => { const a = doc.find('a').get(0); return typeof a.href === 'function' ? a.href() : String(a.href); });
  t('input.value', () => { const a = doc.find('input').get(0); return typeof a.value === 'function' ? a.value() : String(a.value); });
  t('doc.root', () => doc.size() + '|' + doc.get(0).nodeName());
  for (const k of Object.keys(out)) console.log(k + ' => ' + out[k]);
}
