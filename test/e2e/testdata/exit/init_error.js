// The init context throws on line 6.
export const options = { iterations: 1 };

function load() {
  const table = {};
  return table.missing.field;
}

load();

export default function () {}
