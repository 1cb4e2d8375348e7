module.exports = { triple: (n) => n * 3 };
