// jslib.k6.io/papaparse: parse with and without a header row, dynamic
// typing, quoted fields, errors, and unparse.
import papaparse from '{{BASE}}/index.js';
import * as lib from '{{BASE}}/index.js';

const csv = 'id,name,score\n1,"Doe, Jane",3.5\n2,John,\n3,"say ""hi""",7';

function probe() {
  const withHeader = papaparse.parse(csv, { header: true, dynamicTyping: true, skipEmptyLines: true });
  const plain = papaparse.parse(csv);
  const bad = papaparse.parse('a,b\n1,"2\n3,4', { header: true });
  return {
    names: names(lib),
    withHeader: [withHeader.data, withHeader.errors, withHeader.meta.fields, withHeader.meta.delimiter],
    plain: [plain.data, plain.errors.length],
    bad: [bad.data, bad.errors.map((e) => [e.type, e.code, e.row])],
    semicolon: papaparse.parse('a;b\n1;2').meta.delimiter,
    unparse: papaparse.unparse([{ a: 1, b: 'x,y' }, { a: 2, b: 'z"' }]),
    unparseArrays: papaparse.unparse({ fields: ['h1', 'h2'], data: [[1, 2], [3, 4]] }, { quotes: true }),
  };
}
