// jslib.k6.io/k6chaijs: describe blocks that pass, fail an assertion and
// throw, with the checks and groups they record; expect's chains and
// messages outside describe; a response assertion against the loopback
// server.
import http from 'k6/http';
import * as lib from '{{BASE}}/index.js';

const { describe, expect } = lib;

function probe() {
  return { names: names(lib), chaiNames: names(lib.chai || lib.default) };
}

function probeIteration() {
  const out = {};
  out.describe = [
    describe('passes', () => {
      expect(1, 'one').to.equal(1);
      expect({ a: [1, 2] }).to.deep.equal({ a: [1, 2] });
      expect('k6 chai').to.be.a('string').and.include('chai');
      expect([1, 2, 3]).to.have.lengthOf(3);
      expect(5).to.be.within(1, 10);
    }),
    describe('fails', () => {
      expect(1, 'one').to.equal(2);
    }),
    describe('throws', () => { throw new Error('boom'); }),
    describe('response', () => {
      const res = http.get(`${__ENV.ECHO}/json`);
      expect(res.status, 'status').to.equal(200);
      expect(res).to.have.validJsonBody();
      expect(res.json('count'), 'count').to.be.above(2);
    }),
  ];
  out.outside = [
    attempt(() => { expect(2).to.equal(3); return 'passed'; }),
    attempt(() => { expect(null).to.not.exist; return 'passed'; }),
    attempt(() => { expect({ a: 1 }).to.have.property('a').that.is.a('number'); return 'passed'; }),
  ];
  return out;
}
