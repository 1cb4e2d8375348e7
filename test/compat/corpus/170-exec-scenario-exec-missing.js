// A scenario whose exec names a function the script does not export.
export const options = { scenarios: { s: { executor: 'shared-iterations', exec: 'nope' } } };

export default function () {}
