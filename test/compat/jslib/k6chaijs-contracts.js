// jslib.k6.io/k6chaijs-contracts: the matchSchema assertion it adds to
// chai (from jslib.k6.io/k6chaijs 4.3.4.1), on data that fits and data
// that does not.
import { chai, describe, expect } from '{{JSLIB}}/k6chaijs/4.3.4.1/index.js';
import * as lib from '{{BASE}}/index.js';

lib.initContractPlugin(chai);

const schema = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } }, required: ['id'] };

function probe() {
  return { names: names(lib) };
}

function probeIteration() {
  return [
    describe('fits', () => { expect({ id: 1, name: 'a' }).to.matchSchema(schema); }),
    describe('does not fit', () => { expect({ name: 2 }).to.matchSchema(schema); }),
  ];
}
