import { parseHTML } from 'k6/html';
const src = `<div id="d" data-api-key="1" data-id="2" data-my-uuid="3" data-html-x="4" data-json-a-b="5" data-http-url="6" data-abc="7" data-one-two-three="8" data-ip="9" data-xml="10"><p class="a">a</p><p class="b">b</p><span>s</span></div>
<form><input type="checkbox" name="c1" checked="true"><input type="checkbox" name="c2" checked="checked"><input type="checkbox" name="c3" checked="CHECKED"><input type="checkbox" name="c4" checked="">
<select name="s"><option>o1</option><option>o2</option></select><select name="s2"></select><select name="sm" multiple><option>x</option></select>
<input type="radio" name="r" value="a" checked="checked"><input type="file" name="f"><input type="image" name="im"><input type="reset" name="rs"><input name="noval"><input type="text" value="v">
<textarea name="ta"></textarea><button name="bb" value="bb">B</button></form>
<select id="sel"><option value="1">one</option><option value="2" selected="selected">two</option></select>
<label for="x" id="lab">L</label><link rel="stylesheet" href="/s.css"><script src="/x.js" type="module">var a;</script><table><tr><td>c</td></tr></table>`;
export default function () {
  const doc = parseHTML(src);
  const t = (k, f) => { let v; try { v = f(); } catch (e) { v = 'THROW ' + e; } console.log(k + ' => ' + v); };
  t('data', () => { const d = doc.find('#d').data(); return JSON.stringify(Object.keys(d).sort().map(k => [k, d[k]])); });
  t('url', () => JSON.stringify(doc.find('p').url) + '|' + typeof doc.find('p').url);
  t('index', () => doc.find('.b').index() + '|' + doc.find('p').index('.b') + '|' + doc.find('span').index('p') + '|' + doc.find('p').index(doc.find('.b')));
  t('siblings', () => doc.find('.a').siblings().size() + '|' + doc.find('.a').siblings('span').size());
  t('single', () => { const s = doc.find('p').single; return typeof s + '|' + (typeof s === 'function' ? String(s.call(doc.find('p'))) : ''); });
  t('serialize', () => doc.find('form').serialize());
  t('serArr', () => JSON.stringify(doc.find('form').serializeArray()));
  t('serObj', () => { const d = doc.find('form').serializeObject(); return JSON.stringify(Object.keys(d).sort().map(k => [k, d[k]])); });
  t('serInputs', () => doc.find('input').serialize() + '|' + doc.find('input[name=noval]').serialize());
  t('val', () => JSON.stringify([doc.find('[name=s]').val(), doc.find('[name=s2]').val(), doc.find('[name=sm]').val(), doc.find('#sel').val(), doc.find('[name=ta]').val(), doc.find('[name=noval]').val(), doc.find('[name=c1]').val()]));
  const g = (sel, keys) => { const e = doc.find(sel).get(0); return keys.map(k => k + '=' + (typeof e[k] === 'function' ? (() => { try { const v = e[k](); return v && typeof v === 'object' && !Array.isArray(v) ? '[obj ' + (v.nodeName ? v.nodeName() : Object.keys(v)) + ']' : JSON.stringify(v); } catch (x) { return 'THROW'; } })() : 'NA')).join(' '); };
  t('select', () => g('#sel', ['value', 'name', 'options', 'selectedIndex', 'selectedOptions', 'multiple', 'length', 'form', 'type', 'disabled', 'required', 'autofocus', 'labels']));
  t('selectForm', () => g('[name=s]', ['form', 'type', 'length', 'selectedIndex', 'value']));
  t('textarea', () => g('[name=ta]', ['value', 'name', 'type', 'rows', 'cols', 'form', 'readOnly', 'placeholder', 'maxLength', 'disabled', 'required', 'textLength', 'wrap']));
  t('input', () => g('input[type=text]', ['value', 'defaultValue', 'name', 'type', 'checked', 'defaultChecked', 'readOnly', 'placeholder', 'min', 'max', 'step', 'pattern', 'size', 'maxLength', 'minLength', 'list', 'accept', 'alt', 'src', 'autocomplete', 'formAction', 'formMethod', 'formTarget', 'formEnctype', 'formNoValidate', 'labels', 'indeterminate', 'width', 'height']));
  t('label', () => g('#lab', ['htmlFor', 'control', 'form']));
  t('link', () => g('link', ['href', 'rel', 'relList', 'media', 'hreflang', 'type', 'crossOrigin', 'toString']));
  t('script', () => g('script', ['src', 'type', 'text', 'async', 'defer', 'charset', 'crossOrigin', 'noModule']));
  t('table', () => g('table', ['rows', 'tBodies', 'caption', 'tHead', 'tFoot']));
  t('td', () => g('td', ['cellIndex', 'colSpan', 'rowSpan', 'headers']));
  t('tr', () => g('tr', ['cells', 'rowIndex', 'sectionRowIndex']));
  t('button', () => g('button', ['value', 'name', 'type', 'form', 'disabled', 'autofocus', 'formAction', 'formMethod', 'formEnctype', 'formNoValidate', 'formTarget', 'labels']));
  t('checked', () => ['c1', 'c2', 'c3', 'c4'].map(n => doc.find('[name=' + n + ']').get(0).checked()).join(','));
  t('p', () => g('p', ['href', 'value', 'text', 'toString']));
  t('aRel', () => { const a = parseHTML('<a href="x/y?z">t</a>').find('a').get(0); return [a.href(), a.pathname(), a.protocol(), a.host(), a.origin(), a.toString()].join('|'); });
  t('aNone', () => { const a = parseHTML('<a>t</a>').find('a').get(0); return JSON.stringify([a.href(), a.pathname(), a.protocol(), a.host(), a.origin(), a.toString(), a.hash(), a.search(), a.port(), a.username(), a.text()]); });
  t('formEls', () => { const f = doc.find('form').get(0); return f.elements().length + '|' + f.length() + '|' + JSON.stringify(f.action()) + '|' + JSON.stringify(f.method()) + '|' + f.enctype(); });
  t('optIndex', () => doc.find('#sel option').get(1).index() + '|' + doc.find('#sel option').get(1).selected() + '|' + doc.find('#sel option').get(0).selected() + '|' + doc.find('#sel option').get(0).label());
}
