// open() of a missing file fails in the init context (107).
const x = open('./data/does-not-exist.txt');

export default function () {}
