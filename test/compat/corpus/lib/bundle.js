Object.defineProperty(exports, '__esModule', { value: true });
exports.default = function bundled() { return 'bundled'; };
exports.helper = function () { return 'helper'; };
