exports.value = 'helper-value';
exports.libData = open('../data/words.txt').split('\n')[1];
