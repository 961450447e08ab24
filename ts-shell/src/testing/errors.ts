/**
 * The errors `remit/testing` throws itself (docs/errors.md, "remit/testing"): mistakes in a test's
 * use of the helpers, not errors of the library. They are not `RemitError`s: the library's codes
 * (`ErrorCode`) are the ones its calls throw and the CLI maps to exit codes, and these are thrown
 * by test helpers only. Each has a stable string `code` of its own, never changed once published
 * (the message may be reworded), and says what to write instead.
 */

export const TestingErrorCode = {
  FAULT_SPEC_INVALID: 'REMIT_TESTING_FAULT_SPEC_INVALID',
  MISSING_RESUME_VALUE: 'REMIT_TESTING_MISSING_RESUME_VALUE',
  RESUME_FUNCTION_THREW: 'REMIT_TESTING_RESUME_FUNCTION_THREW',
} as const;
export type TestingErrorCode = (typeof TestingErrorCode)[keyof typeof TestingErrorCode];

/**
 * A fault spec that could never fire or cannot be read: not `point[:KIND][@node][#n]`, an unknown
 * point or record kind, a kind the point never carries, an occurrence below 1 (parseFaultSpec,
 * hooksFor); with the workflow given, a node it does not have or of a kind the point is never
 * reached at (hooksFor, checkSpecNode). `spec`: the spec as given (a FaultSpec formatted).
 */
export class FaultSpecInvalidError extends Error {
  readonly code = TestingErrorCode.FAULT_SPEC_INVALID;
  constructor(readonly spec: string, problem: string) {
    super(`bad fault spec ${JSON.stringify(spec)}: ${problem}`);
    this.name = 'FaultSpecInvalidError';
  }
}
