// A CommonJS module whose source map is not shipped, as jslib.k6.io's
// k6-utils 1.3.0-1.6.0 is served.
exports.x = 1;
exports.twice = function (n) { return 2 * n; };
//# sourceMappingURL=cjs-sourcemap.js.map
