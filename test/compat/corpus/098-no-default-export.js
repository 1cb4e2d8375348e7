// A script without a default function and no scenario exec: an error.
export const options = { iterations: 1 };

export function notDefault() {}
