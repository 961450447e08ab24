/**
 * One hierarchy of typed errors with stable codes (docs/errors.md). Every error names what it can:
 * the run id, the sequence number, the node, the field. Codes are strings that never change once
 * published; messages may be reworded. The CLI maps each code to an exit code (`exitCodeFor`).
 */

import { displayText, ESCAPED as DISPLAY_ESCAPED } from './display.js';

export const ErrorCode = {
  DEFINITION_INVALID: 'REMIT_DEFINITION_INVALID',
  DEFINITION_MISMATCH: 'REMIT_DEFINITION_MISMATCH',
  UNKNOWN_WORKFLOW: 'REMIT_UNKNOWN_WORKFLOW',
  RUN_NOT_FOUND: 'REMIT_RUN_NOT_FOUND',
  RUN_EXISTS: 'REMIT_RUN_EXISTS',
  RUN_ID_INVALID: 'REMIT_RUN_ID_INVALID',
  ARGUMENT_INVALID: 'REMIT_ARGUMENT_INVALID',
  STATE_INVALID: 'REMIT_STATE_INVALID',
  NOT_JSON: 'REMIT_NOT_JSON',
  VALUE_UNFAITHFUL: 'REMIT_VALUE_UNFAITHFUL',
  ROUTE_INVALID: 'REMIT_ROUTE_INVALID',
  HANDLER_THREW: 'REMIT_HANDLER_THREW',
  RESUME_VALUE_INVALID: 'REMIT_RESUME_VALUE_INVALID',
  UNKNOWN_INTERRUPT: 'REMIT_UNKNOWN_INTERRUPT',
  NOT_PARKED: 'REMIT_NOT_PARKED',
  ALREADY_CONSUMED: 'REMIT_ALREADY_CONSUMED',
  CONFLICT: 'REMIT_CONFLICT',
  NOT_A_CHECKPOINT: 'REMIT_NOT_A_CHECKPOINT',
  BEYOND_HEAD: 'REMIT_BEYOND_HEAD',
  IMPLICIT_FORK: 'REMIT_IMPLICIT_FORK',
  FORK_TARGET_EXISTS: 'REMIT_FORK_TARGET_EXISTS',
  LOG_CORRUPT: 'REMIT_LOG_CORRUPT',
  LOG_TORN: 'REMIT_LOG_TORN',
  REPAIR_REFUSED: 'REMIT_REPAIR_REFUSED',
  STORE: 'REMIT_STORE',
  STORE_NOT_FOUND: 'REMIT_STORE_NOT_FOUND',
  CORE_UNAVAILABLE: 'REMIT_CORE_UNAVAILABLE',
  CORE_REFUSED: 'REMIT_CORE_REFUSED',
  EFFECT_IN_FLIGHT: 'REMIT_EFFECT_IN_FLIGHT',
  OPTION_INVALID: 'REMIT_OPTION_INVALID',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** What an error is about; every field optional because not every error has every subject. */
export interface ErrorSubject {
  runId?: string;
  seq?: number;
  node?: string;
  field?: string;
}

/** Each RemitError's message before its subject was appended (for restateRecorded). */
const baseMessages = new WeakMap<Error, string>();

export abstract class RemitError extends Error {
  abstract readonly code: ErrorCode;
  readonly runId: string | undefined;
  readonly seq: number | undefined;
  readonly node: string | undefined;
  readonly field: string | undefined;
  /**
   * Set only on an error `resume` throws after its own RESUME_CLAIMED committed (node code after
   * the claim threw, a later value was refused, the store failed): the seq of that claim. The
   * interrupt is consumed by this call's value, and continueRun takes the run on from there; an
   * error without it was thrown before any claim of this call.
   */
  declare readonly claimSeq?: number;

  constructor(message: string, subject: ErrorSubject = {}, options?: { cause?: unknown }) {
    super(withSubject(message, subject), options);
    baseMessages.set(this, message);
    this.name = new.target.name;
    this.runId = subject.runId;
    this.seq = subject.seq;
    this.node = subject.node;
    this.field = subject.field;
  }

  /**
   * A plain object for JSON output (CLI `--json`, logs): the code, name and message, then every
   * field the error has (its own enumerable properties: the subject's and each subclass's, so a
   * field added to a class is never left out), then `details()`, which renders the fields whose
   * value may not be JSON (a route's answer, an option's value) as text.
   */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { code: this.code, name: this.name, message: this.message };
    for (const [key, value] of Object.entries(this)) {
      if (value !== undefined && !(key in out)) out[key] = value;
    }
    // `cause` (what node code or the store threw) is not enumerable, as Error makes it: given as JSON.
    if (this.cause !== undefined) out['cause'] = causeJson(this.cause);
    return { ...out, ...this.details() };
  }

  /** Fields of a subclass as toJSON gives them, where the value itself may not be JSON. */
  protected details(): Record<string, unknown> {
    return {};
  }
}

/**
 * What an error's cause was, as JSON whatever it is: an Error's name and message, and its `code`
 * when it has a string or number one (a client's `ECONNRESET`, a driver's SQLSTATE); anything else
 * as its text.
 */
function causeJson(cause: unknown): Record<string, unknown> | string {
  if (!isInstanceOf(cause, Error)) return describeThrown(cause);
  try {
    const out: Record<string, unknown> = { name: String(cause.name), message: describeThrown(cause) };
    const code: unknown = (cause as { code?: unknown }).code;
    if (typeof code === 'string' || (typeof code === 'number' && Number.isFinite(code))) out['code'] = code;
    return out;
  } catch {
    return describeThrown(cause);
  }
}

/**
 * `error` with the clause of its message that says what was written (a refused value's "nothing
 * was written") replaced by `recorded`, or `recorded` appended when it has none: for a refusal
 * after which something was recorded after all (an effect result that cannot be stored: its
 * attempt is released). Internal: not exported by the package.
 */
export function restateRecorded<E extends RemitError>(error: E, recorded: string): E {
  const NOTHING = '; nothing was written';
  const base = baseMessages.get(error) ?? error.message;
  return restated(error, `${base.endsWith(NOTHING) ? base.slice(0, -NOTHING.length) : base}; ${recorded}`);
}

/** `error`'s message before its subject set to `message`, and its message rebuilt from it. */
function restated<E extends RemitError>(error: E, message: string): E {
  baseMessages.set(error, message);
  error.message = withSubject(message, error);
  return error;
}

/** `error` with `clause` appended to its message (before its subject). */
function withClause<E extends RemitError>(error: E, clause: string): E {
  return restated(error, `${baseMessages.get(error) ?? error.message}; ${clause}`);
}

/**
 * `error`, thrown by resume's drive after its own claim at `claimSeq` committed, restated so that
 * its caller can tell its value was claimed: a retry would otherwise get AlreadyConsumedError
 * naming that claim as if another resumer had made it. Internal: not exported by the package.
 */
export function afterOwnClaim<E extends RemitError>(error: E, interruptId: string, claimSeq: number): E {
  Object.defineProperty(error, 'claimSeq', { value: claimSeq, enumerable: true });
  // Appended, not replacing: what the failed later step wrote (often nothing) stays true of it.
  return withClause(error, `this resume's value for ${interruptId} was claimed at seq ${claimSeq} and stands (the interrupt is consumed): continue the run`);
}

/**
 * A StoreError from the append of an effect's EFFECT_DONE, restated: the handler returned (the
 * outside effect happened) and its result was not recorded, so the next continue calls the
 * handler again with the same key; a store answer that was lost (OUTCOME_UNKNOWN) may have
 * recorded it. The node is named. Internal: not exported by the package.
 */
export function afterHandlerReturned(error: StoreError, node: string, key: string, attempt: number, doneSeq: number): StoreError {
  if (error.node === undefined) Object.defineProperty(error, 'node', { value: node, enumerable: true });
  const recorded = error.storeCode === 'OUTCOME_UNKNOWN'
    ? `its result may or may not have been recorded (EFFECT_DONE at seq ${doneSeq}: status() says which); if not, the next continue calls the handler again with the same idempotency key`
    : 'its result was not recorded (EFFECT_DONE), so the next continue calls the handler again with the same idempotency key';
  return withClause(error, `the handler of effect ${node} had returned (attempt ${attempt}, key ${key}: the outside effect happened), and ${recorded}`);
}

/**
 * `error` naming the run of `subject` (its run id and seq) when it names none: for a refusal made
 * where the run is not known (a schema found asynchronous while it validated a value of the run),
 * so that it names the run as the other errors of the call do. Its node and field are kept.
 * Internal: not exported by the package.
 */
export function namingRun<E extends RemitError>(error: E, subject: ErrorSubject): E {
  if (error.runId !== undefined || subject.runId === undefined) return error;
  const named = error as { runId: string | undefined; seq: number | undefined };
  named.runId = subject.runId;
  if (error.seq === undefined) named.seq = subject.seq;
  error.message = withSubject(baseMessages.get(error) ?? error.message, error);
  return error;
}

function withSubject(message: string, subject: ErrorSubject): string {
  const parts: string[] = [];
  if (subject.runId !== undefined) parts.push(`run ${subject.runId}`);
  if (subject.seq !== undefined) parts.push(`seq ${subject.seq}`);
  if (subject.node !== undefined) parts.push(`node ${subject.node}`);
  // A field may be a caller's key (a misspelt field of a request's value): cut in the message, whole in `field`.
  if (subject.field !== undefined) parts.push(`field ${cutForMessage(subject.field, MAX_QUOTED_CHARS)}`);
  return parts.length === 0 ? message : `${message} [${parts.join(', ')}]`;
}

/** The most characters of a caller's text (a key, a thrown message) a message quotes; the error's fields keep it whole. */
export const MAX_QUOTED_CHARS = 200;
/** The most characters of what node code threw a message quotes; `cause` keeps it. */
export const MAX_THROWN_CHARS = 2000;
/** The most validation issues a message lists; `issues` holds every one. */
const MAX_LISTED_ISSUES = 10;

/**
 * `text` as a message quotes it: whole up to `max` characters, else its start and how long it
 * was. A message is written to logs line by line; a caller's text (a megabyte key, a handler's
 * 100 KB message, 100,000 issues of one array) must not make it megabytes.
 */
export function cutForMessage(text: string, max: number): string {
  if (text.length <= max) return text;
  // Never between the two halves of a surrogate pair: the message stays well-formed Unicode.
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max;
  return `${text.slice(0, end)}… (${text.length} characters)`;
}

// ------------------------------------------------------------------ definitions

export class DefinitionInvalidError extends RemitError {
  readonly code = ErrorCode.DEFINITION_INVALID;
  constructor(readonly workflow: string, problem: string, subject: ErrorSubject = {}) {
    super(`workflow ${workflow}: ${problem}`, subject);
  }
}

/**
 * The run was started under another definition; `differences` names each change. The message
 * says how to finish such runs (docs/guide.md, "Changing a workflow").
 */
export class DefinitionMismatchError extends RemitError {
  readonly code = ErrorCode.DEFINITION_MISMATCH;
  constructor(runId: string, readonly workflow: string, readonly differences: string[], message?: string) {
    super(
      message ??
        `run was started under a different definition of workflow ${workflow}: ${differences.join('; ')}; ` +
          `to finish this run, register the definition it was started under, unchanged, beside the changed one, ` +
          `which goes under a new workflow name for new runs (one instance registers one definition per name: ` +
          `while the changed one keeps this name, only an instance registering the old one, such as the old deployment, finishes this run; ` +
          `docs/guide.md, "Changing a workflow")`,
      { runId },
    );
  }

  /**
   * The run's definition is recorded in a descriptor format newer than this release reads: a newer
   * release started it, and only such a release can tell whether the registered definition is the
   * run's (registering another one would not help).
   */
  static newerRelease(runId: string, workflow: string, recordedFormat: number, readsUpTo: number): DefinitionMismatchError {
    const difference = `started by a newer REMIT release: its definition is recorded in descriptor format ${recordedFormat}, and this release reads formats up to ${readsUpTo}`;
    return new DefinitionMismatchError(runId, workflow, [difference],
      `run of workflow ${workflow} was ${difference}; continue it with that release or a later one ` +
        `(this one cannot tell whether the registered definition is the run's: docs/guide.md, "Definition changes")`);
  }
}

export class UnknownWorkflowError extends RemitError {
  readonly code = ErrorCode.UNKNOWN_WORKFLOW;
  /** `ofStartedRun`: the workflow is the one an existing run was started under (its message says how to finish it). */
  constructor(readonly workflow: string, readonly known: string[], subject: ErrorSubject = {}, { ofStartedRun = false }: { ofStartedRun?: boolean } = {}) {
    const finish = ofStartedRun ? '; the run finishes when the definition it was started under is registered again, unchanged (docs/guide.md, "Changing a workflow")' : '';
    super(`no workflow named ${quoteName(workflow)} is registered (known: ${known.join(', ') || 'none'})${finish}`, subject);
  }
}

/**
 * A name asked for, quoted for a message: cut short past 200 characters, longer than any name
 * build() accepts (a name taken from a request may be megabytes); the error's field keeps it whole.
 */
function quoteName(name: string): string {
  return name.length > 200 ? `${JSON.stringify(name.slice(0, 80))}… (${name.length} characters)` : JSON.stringify(name);
}

// ------------------------------------------------------------------ runs

/** The store neither lists the run nor keeps a record of it (one it lists without records is LogCorruptError, NO_RECORDS). */
export class RunNotFoundError extends RemitError {
  readonly code = ErrorCode.RUN_NOT_FOUND;
  constructor(runId: string) {
    super('no such run (the store neither lists it nor keeps a record of it)', { runId });
  }
}

export class RunExistsError extends RemitError {
  readonly code = ErrorCode.RUN_EXISTS;
  constructor(runId: string) {
    super('a run with this id already exists; nothing was written', { runId, seq: 0 });
  }
}

export class RunIdInvalidError extends RemitError {
  readonly code = ErrorCode.RUN_ID_INVALID;
  /** `subject`: the run of the call when the id refused is another argument's (a fork's newRunId: its source run). */
  constructor(runId: unknown, readonly problem: string, argument?: string, subject: ErrorSubject = {}) {
    // Never String() of an object: a null-prototype one (querystring.parse's) has no conversion.
    const id = typeof runId === 'string' ? JSON.stringify(runId.slice(0, 80)) : describeValueKind(runId);
    super(`invalid run id ${id}${argument === undefined ? '' : ` (${argument})`}: ${problem}`, argument === undefined ? subject : { ...subject, field: argument });
  }
}

/**
 * An argument that cannot name anything (a sequence number that is not an integer in 0..2^32-1,
 * an interrupt id that is not `node@seq`): says which argument, what was expected and what came.
 */
export class ArgumentInvalidError extends RemitError {
  readonly code = ErrorCode.ARGUMENT_INVALID;
  constructor(readonly argument: string, readonly expected: string, readonly received: string, subject: ErrorSubject = {}) {
    super(`${argument} must be ${expected}; got ${received}`, subject);
  }
}

// ------------------------------------------------------------------ node execution

/** A state failed the workflow's state schema: nothing was persisted. `field` is the zod path. */
export class StateInvalidError extends RemitError {
  readonly code = ErrorCode.STATE_INVALID;
  constructor(subject: ErrorSubject, readonly issues: ValidationIssue[]) {
    super(`state fails the state schema: ${describeIssues(issues)}`, { ...subject, field: subject.field ?? firstPath(issues) });
  }
}

/** A value that must be JSON (state, effect result, resume value, fork intent) is not. */
export class NotJsonError extends RemitError {
  readonly code = ErrorCode.NOT_JSON;
  constructor(what: string, problem: string, subject: ErrorSubject = {}) {
    super(`${what} is not JSON-serialisable: ${problem}`, subject);
  }
}

/**
 * Why a value would not read back as itself (ValueUnfaithfulError.reason). TOO_DEEP: objects and
 * arrays nest deeper than REMIT keeps a value (values.ts, MAX_VALUE_DEPTH; docs/guide.md, "Limits").
 * TOO_LARGE: its JSON text is longer than a record's payload holds, or than a JavaScript string.
 */
export type UnfaithfulReason = 'CHANGED_BY_JSON' | 'FAILS_SCHEMA_AGAIN' | 'TRANSFORM_NOT_IDEMPOTENT' | 'TOO_DEEP' | 'TOO_LARGE';

/**
 * A value about to be written (input, state, resume value, effect result, fork intent) would not
 * read back as itself: its JSON form differs from it (a Date becomes a string, undefined in an
 * array becomes null), or its schema rejects or changes it when it validates the stored form
 * again. Refused before anything was appended (docs/guide.md, "Values in the log").
 */
export class ValueUnfaithfulError extends RemitError {
  readonly code = ErrorCode.VALUE_UNFAITHFUL;
  constructor(readonly value: string, readonly reason: UnfaithfulReason, why: string, subject: ErrorSubject) {
    super(`the ${value} ${reason === 'TOO_LARGE' ? 'cannot be recorded' : 'would not read back as written'}: ${why}; nothing was written`, subject);
  }
}

export class RouteInvalidError extends RemitError {
  readonly code = ErrorCode.ROUTE_INVALID;
  constructor(readonly target: unknown, subject: ErrorSubject) {
    super(`the route returned ${describeRouteTarget(target)}, which is neither a node of the workflow nor END${endMeant(target)}`, subject);
  }
  /** A string target as it is; any other answer (a Promise, a number, an object) described. */
  protected override details() {
    return { target: typeof this.target === 'string' ? this.target : describeRouteTarget(this.target) };
  }
}

/** A route's answer for its error: a string as JSON, a Promise named as one (routes are synchronous), the rest by kind. */
/** For a route to the string a newcomer writes for the END constant ("END", "end"): where END is. Else ''. */
export function endMeant(target: unknown): string {
  return typeof target === 'string' && /^end$/i.test(target) ? ' (to end the run, route to the END constant remit exports, not the string)' : '';
}

function describeRouteTarget(target: unknown): string {
  if (typeof target === 'string') return JSON.stringify(cutForMessage(target, MAX_QUOTED_CHARS));
  if (isThenable(target)) {
    return 'a Promise (a route returns a node name or END synchronously)';
  }
  return describeValueKind(target);
}

/**
 * A node's code threw an ordinary error. Nothing was recorded for the step; the run continues from
 * its durable prefix on the next `continueRun`. (A `TerminalFailure` fails the run instead.)
 */
export class HandlerThrewError extends RemitError {
  readonly code = ErrorCode.HANDLER_THREW;
  /** `recorded`: what the step did record before the code threw (default: nothing). */
  constructor(subject: ErrorSubject, cause: unknown, recorded = 'nothing was recorded for this step') {
    super(`node code threw: ${cutForMessage(describeThrown(cause), MAX_THROWN_CHARS)}; ${recorded}`, subject, { cause });
  }
}

// ------------------------------------------------------------------ resume

export class ResumeValueInvalidError extends RemitError {
  readonly code = ErrorCode.RESUME_VALUE_INVALID;
  constructor(readonly interruptId: string, subject: ErrorSubject, readonly issues: ValidationIssue[]) {
    super(
      `resume value for ${interruptId} fails its schema: ${describeIssues(issues)}; the interrupt was not consumed`,
      { ...subject, field: subject.field ?? firstPath(issues) },
    );
  }
}

export class UnknownInterruptError extends RemitError {
  readonly code = ErrorCode.UNKNOWN_INTERRUPT;
  constructor(readonly interruptId: string, subject: ErrorSubject, why: string) {
    // Printable ASCII as it is (the ids REMIT makes, `approve@6`); anything else as JSON, with what
    // JSON keeps (C1 controls, separators, bidi controls) escaped too, so that a caller's id cannot
    // forge or reorder a line of a log that prints the message.
    super(`unknown interrupt ${/^[\x20-\x7e]+$/.test(interruptId) ? interruptId : displayText(JSON.stringify(interruptId))}: ${why}`, subject);
  }
}

export class NotParkedError extends RemitError {
  readonly code = ErrorCode.NOT_PARKED;
  /** `advice`: what would make the run parked, when REMIT knows (a fork nobody has continued). */
  constructor(readonly interruptId: string, readonly status: 'empty' | 'running' | 'completed' | 'failed', subject: ErrorSubject, advice?: string) {
    super(`cannot resume ${interruptId}: the run is ${status}, not parked${advice === undefined ? '' : `; ${advice}`}`, subject);
  }
}

/** A second resume of an interrupt; `seq` is the seq of the claim that consumed it. */
export class AlreadyConsumedError extends RemitError {
  readonly code = ErrorCode.ALREADY_CONSUMED;
  /** The value the claim at `seq` recorded (as `apply` receives it); absent when it could not be read. */
  readonly claimedValue: unknown;
  /**
   * Whether this call's value, checked and encoded as its claim would have been, is byte for byte
   * the recorded one: true for a resume retried after its answer was lost (or another resumer's
   * identical value). Absent when the claim could not be read.
   */
  readonly sameValue: boolean | undefined;
  constructor(readonly interruptId: string, subject: ErrorSubject, claimed?: { value: unknown; same: boolean }) {
    super(
      `interrupt ${interruptId} was already resumed${claimed === undefined ? '' : claimed.same ? ' with this same value' : ' with a value other than this one (compared as recorded, byte for byte: keys in another order differ)'}; this resume was refused and not recorded`,
      subject,
    );
    this.claimedValue = claimed?.value;
    this.sameValue = claimed?.same;
  }
}

// ------------------------------------------------------------------ concurrency, fork, continue

/** Another writer appended at the expected seq first. This writer wrote nothing and stopped. */
export class ConflictError extends RemitError {
  readonly code = ErrorCode.CONFLICT;
  constructor(runId: string, expectedSeq: number, readonly storeNextSeq: number) {
    super(
      `another sequencer appended first (expected next seq ${expectedSeq}, store is at ${storeNextSeq}); nothing was written`,
      { runId, seq: expectedSeq },
    );
  }
}

/**
 * A ConflictError from the append of an effect's EFFECT_DONE (with the node's completion, or the
 * failure recorded after it), restated: "called no handler" would be untrue. This call's handler
 * was called and returned (the outside effect happened), and its result was not recorded, since
 * another sequencer appended after the attempt: its lease ran out and the attempt was taken over,
 * and the attempt that took it over calls the handler with the same key. Class and code are kept
 * (a waiting continueRun retries on it as on any conflict). Internal: not exported by the package.
 */
export function afterHandlerTakenOver(error: ConflictError, node: string, key: string, attempt: number): ConflictError {
  if (error.node === undefined) Object.defineProperty(error, 'node', { value: node, enumerable: true });
  return restateRecorded(error, `the handler of effect ${node} had been called here and had returned (attempt ${attempt}, key ${key}: the outside effect happened), ` +
    'and its result was not recorded (EFFECT_DONE: nothing was written): the attempt\'s lease ran out and another sequencer took it over, so this call\'s ' +
    'outcome is not the run\'s; the attempt that took it over calls the handler with the same idempotency key');
}

/**
 * The longest lease (MAX_LEASE_MS, workflow/workflow.ts, a day; not imported from there, since that
 * module imports this one): a lease that ends further than this from a reader's clock was stamped
 * by a clock ahead of the reader's.
 */
const LONGEST_LEASE_MS = 86_400_000;

/** Skew between hosts' clocks taken as ordinary: a lease that ends less than this past the longest one is not remarked on. */
export const ORDINARY_SKEW_MS = 300_000;

/**
 * An attempt of this effect is recorded without an outcome and its owner may be calling the handler
 * now: its lease has not expired, or its owner is this very instance and the call is still running
 * here. Nothing was written and no handler was called. Retry after `retryAfterMs` (or pass
 * `waitForEffectMs` to continueRun / recoverAll); docs/guide.md, "Concurrent sequencers".
 */
export class EffectInFlightError extends RemitError {
  readonly code = ErrorCode.EFFECT_IN_FLIGHT;
  constructor(
    runId: string,
    /** Seq of the attempt's EFFECT_ATTEMPT record. */
    attemptSeq: number,
    node: string,
    readonly key: string,
    readonly attempt: number,
    /** The instance id that claimed the attempt ("" when its lease is unreadable). */
    readonly owner: string,
    /** When the lease runs out by the owner's clock (epoch ms). */
    readonly leaseExpiresAtMs: number,
    /**
     * How long to wait before trying again (at least 1): the lease's remaining time, or, when
     * `runningHere`, a short poll interval (that call ends when its handler returns, lease or not).
     */
    readonly retryAfterMs: number,
    /** A call of this thread (a Remit instance here, under the owner's id) is running the attempt. */
    readonly runningHere = false,
  ) {
    super(
      `attempt ${attempt} of effect ${key} is in flight (owner ${owner || '?'}, lease until ${leaseTimeText(leaseExpiresAtMs)}); ` +
        `no handler was called and nothing was written; retry after ${retryAfterMs} ms (${runningHere ? 'a call in this thread is running it: a poll interval, not the lease\'s remaining time' : 'when its lease runs out'})` +
        (!runningHere && retryAfterMs > LONGEST_LEASE_MS + ORDINARY_SKEW_MS ? `; ${leaseBeyondLongestClause(owner)}` : ''),
      { runId, seq: attemptSeq, node },
    );
  }
}

/**
 * A lease's end as ISO 8601, or, for a time no Date can hold (a lease another program or version
 * stored: the lease codec accepts any finite number), the number itself: the refusal must not
 * become a RangeError from toISOString.
 */
function leaseTimeText(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${String(ms)} ms since the epoch, beyond the times a Date can hold` : date.toISOString();
}

/**
 * Why a lease ends more than the longest lease after this instance's clock, and what to do: it is
 * not taken over (the clock behind may be this one), so waiting would take longer than any lease.
 */
function leaseBeyondLongestClause(owner: string): string {
  const takeOver = owner === ''
    ? ''
    : ` If its owner ${owner} crashed, continue under its instance id (createRemit({ instanceId }), \`remit --instance-id\`), which takes its attempts over at once ` +
      '(never while a process with that id may still be running).';
  return `that lease ends more than the longest lease (${LONGEST_LEASE_MS} ms, a day) and ${ORDINARY_SKEW_MS / 60_000} minutes after this instance's clock: the owner's clock was ahead of this one's ` +
    `when it claimed the attempt, or this one is behind. The attempt is not taken over before its lease ends by this clock, which may be the wrong one.${takeOver}`;
}

/** An option passed to REMIT (createRemit, continueRun, recoverAll, an effect node) has a value it cannot use. */
export class OptionInvalidError extends RemitError {
  readonly code = ErrorCode.OPTION_INVALID;
  constructor(readonly option: string, readonly value: unknown, problem: string, subject: ErrorSubject = {}) {
    super(`option ${cutForMessage(option, MAX_QUOTED_CHARS)} ${problem} (got ${describeValue(value)})`, { ...subject, field: option });
  }
  /** The value described, as in the message (it may be any object, even a cyclic one). */
  protected override details() {
    return { value: describeValue(this.value) };
  }
}

export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return typeof value;
}

export class NotACheckpointError extends RemitError {
  readonly code = ErrorCode.NOT_A_CHECKPOINT;
  /** `recordKind`: the kind of the record at `seq` (EFFECT_INTENT, ...), when the call read it. */
  constructor(runId: string, seq: number, readonly recordKind?: string) {
    super(`the record at this seq${recordKind === undefined ? '' : ` (${recordKind})`} is not a checkpoint (RUN_STARTED or NODE_COMPLETED): fork or continue from the seq of one (remit inspect lists them)`, { runId, seq });
  }
}

export class BeyondHeadError extends RemitError {
  readonly code = ErrorCode.BEYOND_HEAD;
  constructor(runId: string, readonly requestedSeq: number, headSeq: number) {
    super(`seq ${requestedSeq} is beyond the head of the log (head seq ${headSeq})`, { runId, seq: headSeq });
  }
}

/** Continuing from a checkpoint other than the head needs an explicit fork. */
export class ImplicitForkError extends RemitError {
  readonly code = ErrorCode.IMPLICIT_FORK;
  /** `requestedIsCheckpoint`: whether a fork at `requestedSeq` would be accepted (it is a checkpoint). */
  constructor(runId: string, readonly requestedSeq: number, headSeq: number, readonly requestedIsCheckpoint = true) {
    super(
      requestedIsCheckpoint
        ? `refusing to continue from seq ${requestedSeq}: the head is seq ${headSeq}; fork the run at that checkpoint to go back in time`
        : `refusing to continue from seq ${requestedSeq}: the head is seq ${headSeq}, and seq ${requestedSeq} is not a checkpoint (RUN_STARTED or NODE_COMPLETED), so no fork can start there either; fork the run at a checkpoint before the head to go back in time`,
      { runId, seq: headSeq },
    );
  }
}

export class ForkTargetExistsError extends RemitError {
  readonly code = ErrorCode.FORK_TARGET_EXISTS;
  constructor(readonly targetRunId: string, subject: ErrorSubject) {
    super(`cannot fork into ${targetRunId}: a run with that id exists; nothing was written`, subject);
  }
}

// ------------------------------------------------------------------ log, store, core

/**
 * `text` as one word of a shell command line, for the commands REMIT suggests: a run id may hold
 * spaces, quotes or `;`, and a suggested command pasted into a shell must not run anything else,
 * and must name what it names. Plain words stay as they are; others are single-quoted (POSIX sh).
 * A word holding a character that human output escapes (display.ts: a control character, a line
 * separator, a bidi control such as U+202E, a backslash starting `\u{`) is written in ANSI-C
 * quoting instead, `$'…'` (bash, zsh, ksh; not dash), each such character as its UTF-8 bytes
 * `\xHH`: the word then holds only characters displayText leaves alone, so the printed command,
 * escaped or not, is the one that reads back, in any locale, as `text` exactly.
 */
export function shellWord(text: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(text)) return text;
  // What displayText escapes is written as bytes here (a lone surrogate, which no command line can
  // carry, as U+FFFD's), so that a word shows as it is in human output; the CLI's tests check that
  // displayText leaves every shellWord as it is.
  if (!DISPLAY_ESCAPED.test(text)) return `'${text.replaceAll("'", `'\\''`)}'`;
  let out = '';
  for (const { 0: character, index } of text.matchAll(/[^]/gu)) {
    if (character === "'") out += "\\'";
    // A backslash that starts "u{" as `\x5c`: `\\u{` is what displayText would escape.
    else if (character === '\\') out += text.startsWith('u{', index + 1) ? '\\x5c' : '\\\\';
    // `!` too, which an interactive shell's history expansion must not see.
    else if (character === '!' || DISPLAY_ESCAPED.test(character)) out += [...UTF8.encode(character)].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('');
    else out += character;
  }
  return `$'${out}'`;
}

const UTF8 = new TextEncoder();

/**
 * The global options a suggested command must carry to reach the same data: the CLI sets them
 * (the `--db` it was given, the `--workflow` it loaded) before a command runs, so that a suggested
 * command pasted as printed opens the same database. Library callers leave them unset: their
 * suggested commands name the CLI's defaults.
 */
export interface SuggestedCommandOptions {
  /** `--db=...`, `--core=...`, `--synchronous=...`: for every command. Shell words, quoted already. */
  always: readonly string[];
  /**
   * `--workflow=...`: for the commands that drive runs and so load the workflows. Shell words,
   * quoted already; or a placeholder (`--workflow <module>`) when the module is not known.
   */
  workflows: readonly string[];
}

const NO_SUGGESTED_OPTIONS: SuggestedCommandOptions = { always: [], workflows: [] };
let suggestedOptions = NO_SUGGESTED_OPTIONS;

/** The commands that load the workflow module (`--workflow`); the others read logs only. */
const COMMANDS_WITH_WORKFLOWS = new Set(['run', 'resume', 'continue', 'fork']);

/** Set (or, with no argument, clear) the options suggested commands carry. For the CLI. */
export function setSuggestedCommandOptions(options: SuggestedCommandOptions = NO_SUGGESTED_OPTIONS): void {
  suggestedOptions = options;
}

/**
 * A `remit <options> <command> <arguments...>` line to suggest, each word quoted for the shell, and
 * the arguments after `--` when one starts with `-` (a run id may), so that the CLI does not read
 * it as an option. The options are the ones set by setSuggestedCommandOptions.
 */
export function suggestCommand(command: string, ...positionals: string[]): string {
  const options = [...suggestedOptions.always, ...(COMMANDS_WITH_WORKFLOWS.has(command) ? suggestedOptions.workflows : [])];
  const end = positionals.some((p) => p.startsWith('-')) ? ['--'] : [];
  return ['remit', ...options, command, ...end, ...positionals.map(shellWord)].join(' ');
}

/**
 * What to do with a fork nobody has continued: it is driven only on request, so it is running
 * but never parks, and a resume or a wait for it would wait for ever.
 */
export function undrivenForkAdvice(runId: string): string {
  return `it is a fork that nobody has continued yet (its last record is FORKED): drive it with \`${suggestCommand('continue', runId)}\` (Remit.continueRun), then resume it once it parks`;
}

/** What an operator can do about a record that fails its integrity check. */
export function corruptAdvice(runId: string): string {
  return `the record was complete and is now damaged, so REMIT will not repair it: restore the store from a backup; \`${suggestCommand('inspect', runId)}\` shows what is intact`;
}

/** What an operator can do about an incomplete or empty last record. */
export function tornAdvice(runId: string): string {
  return `\`${suggestCommand('repair', runId)}\` (Remit.repair) removes it when losing it is the same as a crash before it was written, and refuses otherwise ` +
    '(on a store that can remove a record, removeLastRecord: the memory, SQLite and PostgreSQL stores can)';
}

/**
 * A record failed its integrity check; nothing after it was loaded. `advice`: what to do. Also a
 * run the store lists but keeps no record of (`logError` NO_RECORDS, seq 0).
 */
export class LogCorruptError extends RemitError {
  readonly code = ErrorCode.LOG_CORRUPT;
  constructor(runId: string, seq: number, readonly offset: number, readonly logError: string, readonly advice: string = corruptAdvice(runId)) {
    super(
      logError === 'NO_RECORDS'
        ? `the store lists the run but keeps none of its records (NO_RECORDS); ${advice}`
        : `log record is invalid (${logError}) at byte offset ${offset}; nothing after it was loaded; ${advice}`,
      { runId, seq },
    );
  }
}

/**
 * The stored log ends in an incomplete record (`tornBytes` of it were stored; 0 for an empty
 * record). Stores keep whole records, so this is damage; `advice` says what to do.
 */
export class LogTornError extends RemitError {
  readonly code = ErrorCode.LOG_TORN;
  constructor(runId: string, seq: number, readonly tornBytes: number, readonly advice: string = tornAdvice(runId)) {
    super(
      tornBytes === 0
        ? `the stored log ends in an empty record (0 bytes); ${advice}`
        : `the stored log ends in an incomplete record of ${tornBytes} bytes; ${advice}`,
      { runId, seq },
    );
  }
}

/** `repair` will not remove the damaged record: losing it is not the same as a crash before it. */
export class RepairRefusedError extends RemitError {
  readonly code = ErrorCode.REPAIR_REFUSED;
  constructor(runId: string, seq: number, readonly why: string) {
    super(`refusing to repair: ${why}; nothing was changed`, { runId, seq });
  }
}

/** A store operation failed (I/O, lock timeout, constraint). `storeCode` is the backend's code. */
export class StoreError extends RemitError {
  readonly code = ErrorCode.STORE;
  constructor(readonly store: string, readonly operation: string, readonly storeCode: string, subject: ErrorSubject = {}, cause?: unknown) {
    super(`store ${store}: ${operation} failed (${storeCode})${cause ? `: ${describeThrown(cause)}` : ''}`, subject, { cause });
  }
}

/** The store does not exist (a SQLite file that is not there) and was not to be created. */
export class StoreNotFoundError extends RemitError {
  readonly code = ErrorCode.STORE_NOT_FOUND;
  constructor(readonly store: string, readonly path: string, hint: string) {
    super(`no store at ${path}: ${hint}`);
  }
}

/** Why a recovery core could not be loaded (`CoreUnavailableError.reason`). */
export type CoreUnavailableReason = 'WASM_NOT_INSTALLED' | 'WASM_NOT_BUILT' | 'WASM_LOAD_FAILED' | 'UNKNOWN_CORE';

/**
 * A recovery core cannot be loaded: the Wasm binding is not installed or not built, or fails to
 * load, or the core kind is unknown. Never answered by falling back to another core.
 */
export class CoreUnavailableError extends RemitError {
  readonly code = ErrorCode.CORE_UNAVAILABLE;
  constructor(readonly core: string, readonly reason: CoreUnavailableReason, problem: string, cause?: unknown) {
    super(`the ${core} recovery core is unavailable: ${problem}`, {}, { cause });
  }
}

/** The core refused an admission for a reason the shell does not expect here (e.g. BAD_REQUEST). */
export class CoreRefusedError extends RemitError {
  readonly code = ErrorCode.CORE_REFUSED;
  constructor(readonly reason: string, subject: ErrorSubject) {
    super(`the recovery core refused the request: ${reason}`, subject);
  }
}

// ------------------------------------------------------------------ terminal failure

/**
 * Thrown by node code (or through `fail()`) to end the run as failed: a RUN_FAILED record is
 * appended and the run is terminal. Any other thrown error stops the sequencer without recording.
 */
export class TerminalFailure extends Error {
  readonly failureCode: string;
  /**
   * Throws a TypeError (which node code then throws: HandlerThrewError names its run, seq and node)
   * when the code is not a non-empty string or the message not a string: RUN_FAILED records both as
   * text, and one that is not would leave the run unable to fail and the interrupt or effect attempt
   * that led to it consumed.
   */
  constructor(failureCode: string, message: string) {
    const code = failureText('code', failureCode, false);
    super(failureText('message', message, true));
    this.failureCode = code;
    this.name = 'TerminalFailure';
  }
}

function failureText(what: 'code' | 'message', value: unknown, emptyAllowed: boolean): string {
  if (typeof value === 'string' && (emptyAllowed || value !== '')) return value;
  const expected = emptyAllowed ? 'a string' : 'a non-empty string';
  throw new TypeError(`fail(): the failure ${what} must be ${expected} (got ${describeValueKind(value)})`);
}

/** What a value is, in a few words that never throw: `the number 403`, `an object`, `undefined`. */
function describeValueKind(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `the ${typeof value} ${String(value)}`;
  if (typeof value === 'string') return 'an empty string';
  if (value === null || value === undefined) return String(value);
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function fail(failureCode: string, message: string): never {
  throw new TerminalFailure(failureCode, message);
}

// ------------------------------------------------------------------ helpers

export interface ValidationIssue {
  /** The zod path joined with dots (`approval.approver`, `items.3.sku`), or "(root)". */
  path: string;
  message: string;
}

/** zod issues (`{ path, message }`) in a stable, printable form. */
export function toValidationIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string; code?: string; keys?: unknown }>): ValidationIssue[] {
  const pathText = (path: ReadonlyArray<PropertyKey>) => (path.length === 0 ? '(root)' : path.map((p) => String(p)).join('.'));
  return issues.flatMap((issue) => {
    // A strict object's unknown keys (`z.strictObject`, `.strict()`): zod's path is the object's;
    // each key is named by its own path, as a field a schema would drop is.
    if (issue.code === 'unrecognized_keys' && Array.isArray(issue.keys) && issue.keys.length > 0) {
      return issue.keys.map((key) => ({ path: pathText([...issue.path, String(key)]), message: 'an unrecognized key: the schema names no such field' }));
    }
    return [{ path: pathText(issue.path), message: issue.message }];
  });
}

function describeIssues(issues: ValidationIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((i) => `${cutForMessage(i.path, MAX_QUOTED_CHARS)}: ${cutForMessage(i.message, MAX_ISSUE_MESSAGE_CHARS)}`);
  const more = issues.length - listed.length;
  return more > 0 ? `${listed.join('; ')}; and ${more} more (the error's issues lists all ${issues.length})` : listed.join('; ');
}

/** An issue's message is REMIT's or the schema's own (a refine's), longer than a key: cut later. */
export const MAX_ISSUE_MESSAGE_CHARS = 1000;

function firstPath(issues: ValidationIssue[]): string | undefined {
  return issues[0]?.path;
}

/** `value instanceof type`, and false for a value on which even that throws (a revoked Proxy). */
export function isInstanceOf<T>(value: unknown, type: abstract new (...args: never[]) => T): value is T {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/**
 * Whether `value` is a Promise or another thenable (an object or function with a callable `then`).
 * Reading `then` runs a getter the value may have, which can throw, as `await` would: node code's
 * value is tested inside the step's try, so such a throw is the node's failure (HandlerThrewError).
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * The text of a thrown value, for an error message or a record: an Error's message, the string
 * `message` of any other object (clients that reject with plain objects, `{ code, message }`,
 * would otherwise read "[object Object]"), anything else as String() gives it. Never throws: node
 * code may throw an object without a prototype, one whose toString or message getter throws, or a
 * revoked Proxy (even `instanceof` throws on that), and the failure it caused must still be
 * reported and recorded.
 */
export function describeThrown(value: unknown): string {
  try {
    if (value instanceof Error) {
      const message: unknown = value.message;
      return typeof message === 'string' ? message : String(message);
    }
    if (typeof value === 'object' && value !== null) {
      const message: unknown = (value as { message?: unknown }).message;
      if (typeof message === 'string' && message !== '') return message;
    }
    return String(value);
  } catch {
    return `a thrown ${typeof value} that cannot be turned into text`;
  }
}

/**
 * Every error class REMIT throws, as one union: after `isRemitError(error)`, `switch (error.code)`
 * narrows `error` to the class of that code, its own fields typed (`issues`, `retryAfterMs`, ...),
 * which `instanceof RemitError` alone does not.
 */
export type AnyRemitError =
  | DefinitionInvalidError | DefinitionMismatchError | UnknownWorkflowError | RunNotFoundError | RunExistsError
  | RunIdInvalidError | ArgumentInvalidError | StateInvalidError | NotJsonError | ValueUnfaithfulError
  | RouteInvalidError | HandlerThrewError | ResumeValueInvalidError | UnknownInterruptError | NotParkedError
  | AlreadyConsumedError | ConflictError | EffectInFlightError | OptionInvalidError | NotACheckpointError
  | BeyondHeadError | ImplicitForkError | ForkTargetExistsError | LogCorruptError | LogTornError
  | RepairRefusedError | StoreError | StoreNotFoundError | CoreUnavailableError | CoreRefusedError;

/** Whether `error` is one of REMIT's errors, typed as the union so that its `code` narrows it. */
export function isRemitError(error: unknown): error is AnyRemitError {
  return error instanceof RemitError;
}
