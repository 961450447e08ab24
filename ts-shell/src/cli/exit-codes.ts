/**
 * Exit codes of the `remit` command, by error code (docs/errors.md). They belong to the CLI, not to
 * the library: a service reads `error.code`.
 */

import { RemitError, type ErrorCode } from '../errors.js';

/** Exit codes of the CLI, by error code. Documented in docs/errors.md. */
export const ExitCode = {
  OK: 0,
  UNEXPECTED: 1,
  USAGE: 2,
  NOT_FOUND: 3,
  REFUSED: 4,
  INVALID_VALUE: 5,
  DEFINITION: 6,
  LOG_DAMAGED: 7,
  STORE: 8,
  HANDLER: 9,
  RUN_FAILED: 10,
} as const;

const exitByCode: Record<ErrorCode, number> = {
  REMIT_DEFINITION_INVALID: ExitCode.DEFINITION,
  REMIT_DEFINITION_MISMATCH: ExitCode.DEFINITION,
  REMIT_UNKNOWN_WORKFLOW: ExitCode.DEFINITION,
  REMIT_RUN_NOT_FOUND: ExitCode.NOT_FOUND,
  REMIT_RUN_EXISTS: ExitCode.REFUSED,
  REMIT_RUN_ID_INVALID: ExitCode.USAGE,
  REMIT_ARGUMENT_INVALID: ExitCode.USAGE,
  REMIT_STATE_INVALID: ExitCode.INVALID_VALUE,
  REMIT_NOT_JSON: ExitCode.INVALID_VALUE,
  REMIT_VALUE_UNFAITHFUL: ExitCode.INVALID_VALUE,
  REMIT_ROUTE_INVALID: ExitCode.HANDLER,
  REMIT_HANDLER_THREW: ExitCode.HANDLER,
  REMIT_RESUME_VALUE_INVALID: ExitCode.INVALID_VALUE,
  REMIT_UNKNOWN_INTERRUPT: ExitCode.REFUSED,
  REMIT_NOT_PARKED: ExitCode.REFUSED,
  REMIT_ALREADY_CONSUMED: ExitCode.REFUSED,
  REMIT_CONFLICT: ExitCode.REFUSED,
  REMIT_NOT_A_CHECKPOINT: ExitCode.REFUSED,
  REMIT_BEYOND_HEAD: ExitCode.REFUSED,
  REMIT_IMPLICIT_FORK: ExitCode.REFUSED,
  REMIT_FORK_TARGET_EXISTS: ExitCode.REFUSED,
  REMIT_LOG_CORRUPT: ExitCode.LOG_DAMAGED,
  REMIT_LOG_TORN: ExitCode.LOG_DAMAGED,
  REMIT_REPAIR_REFUSED: ExitCode.LOG_DAMAGED,
  REMIT_STORE: ExitCode.STORE,
  REMIT_STORE_NOT_FOUND: ExitCode.NOT_FOUND,
  REMIT_CORE_UNAVAILABLE: ExitCode.UNEXPECTED,
  REMIT_CORE_REFUSED: ExitCode.UNEXPECTED,
  REMIT_EFFECT_IN_FLIGHT: ExitCode.REFUSED,
  REMIT_OPTION_INVALID: ExitCode.USAGE,
};

export function exitCodeFor(error: unknown): number {
  return error instanceof RemitError ? exitByCode[error.code] : ExitCode.UNEXPECTED;
}
