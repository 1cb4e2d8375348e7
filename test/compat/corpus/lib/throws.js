// A module whose function throws, for 484: the frame names this file.
export function fromModule() {
  throw new Error('thrown in a module');
}
