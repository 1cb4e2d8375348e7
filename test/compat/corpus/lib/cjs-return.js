// A CommonJS file with a top-level return, as jslib.k6.io's formdata
// 0.0.1-0.0.2 is written: no ES module, but a valid function body.
if (exports.Greeter) {
  return;
}
exports.Greeter = function (name) {
  return 'hello ' + name + ' from ' + typeof global;
};
