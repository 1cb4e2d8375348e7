const helper = require('./helper.js');

module.exports = {
  name: 'cjs',
  mul: (a, b) => a * b,
  nested: helper.value,
  libData: helper.libData,
};
