/**
 * Assertions of what must hold inside REMIT (TigerBeetle's habit): a failed one is a bug in REMIT,
 * never bad input, and fails loudly instead of being papered over. Bad input gets a typed
 * RemitError (./errors.ts), not an assertion.
 */

/** An invariant of REMIT's own code was broken. Report it; nothing was written after it. */
export class InvariantViolation extends Error {
  override readonly name = 'InvariantViolation';
  constructor(message: string) {
    super(`REMIT bug (please report): ${message}`);
  }
}

/** Throws InvariantViolation unless `condition` holds. `message` may be a function, built only on failure. */
export function assert(condition: unknown, message: string | (() => string)): asserts condition {
  if (!condition) throw new InvariantViolation(typeof message === 'function' ? message() : message);
}

/** A path that cannot be reached when the code is right. */
export function unreachable(message: string): never {
  throw new InvariantViolation(message);
}
