// The TextEncoder/TextDecoder probe: run through k6 v2.2.0 with
//   k6 run -q --summary-mode=disabled --log-format=json k6text.js
// and recorded in k6text.k6.json; textencoding_test.go runs it in metronome.
export default function () {
  const out = [];
  const t = (n, f) => { try { const v = f(); out.push(n + ' => ' + (v instanceof Uint8Array ? 'U8[' + Array.from(v).join(',') + ']' : JSON.stringify(v))); } catch (e) { out.push(n + ' !! ' + e.name + ': ' + e.message); } };
  t('types', () => [typeof TextEncoder, typeof TextDecoder]);
  t('enc', () => new TextEncoder().encode('hé✓😀'));
  t('enc empty', () => new TextEncoder().encode());
  t('enc num', () => new TextEncoder().encode(12));
  t('encoding', () => [new TextEncoder().encoding, new TextDecoder().encoding, new TextDecoder('UTF-8').encoding, new TextDecoder().fatal, new TextDecoder().ignoreBOM]);
  t('encodeInto', () => { const u = new Uint8Array(3); return new TextEncoder().encodeInto('héllo', u); });
  t('dec', () => new TextDecoder().decode(new Uint8Array([104, 195, 169, 226, 156, 147])));
  t('dec AB', () => new TextDecoder().decode(new Uint8Array([104, 105]).buffer));
  t('dec DV', () => new TextDecoder().decode(new DataView(new Uint8Array([104, 105]).buffer)));
  t('dec none', () => new TextDecoder().decode());
  t('dec bad', () => new TextDecoder().decode(new Uint8Array([255, 104])));
  t('dec fatal', () => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([255, 104])));
  t('dec bom', () => new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 104])));
  t('dec bom kept', () => new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 104])).length);
  t('latin1', () => new TextDecoder('latin1').encoding);
  t('utf-16le', () => new TextDecoder('utf-16le').decode(new Uint8Array([104, 0, 105, 0])));
  t('bogus', () => new TextDecoder('bogus'));
  t('stream', () => { const d = new TextDecoder(); return d.decode(new Uint8Array([226, 156]), { stream: true }) + '|' + d.decode(new Uint8Array([147])); });
  t('string', () => String(new TextEncoder()));
  console.log('RESULT ' + JSON.stringify(out));
}
