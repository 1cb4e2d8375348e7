// A module that throws while it is evaluated, for 494: the frame names
// this file.
export function ready() {}

throw new Error('module could not initialise');
