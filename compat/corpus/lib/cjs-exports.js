exports.name = 'exports';
