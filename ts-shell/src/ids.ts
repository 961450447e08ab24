/**
 * Every identifier format REMIT writes or parses, in one place: run ids (default and fork ids, and
 * the rule a run id must follow), effect idempotency keys, interrupt ids and sequencer instance
 * ids. Keys and interrupt ids are positional (docs/architecture.md, decision 4): they are derived
 * from the log, never from a clock or a counter kept elsewhere, so every process that reads the log
 * derives the same ones.
 */

import { randomUUID } from 'node:crypto';
import { OptionInvalidError, RunIdInvalidError, type ErrorSubject } from './errors.js';
import { isWellFormedUnicode, utf8 } from './json.js';
import { MAX_NODE_NAME_BYTES } from './workflow/workflow.js';

/** Run ids are at most this many UTF-8 bytes (so that an effect key fits the log's 1024-byte names). */
export const MAX_RUN_ID_BYTES = 200;

/** A name in the log (and so an effect key) is at most this many bytes (docs/log-format.md). */
export const MAX_KEY_BYTES = 1024;

/** Instance ids are at most this many UTF-8 bytes (they are written into every attempt's lease). */
export const MAX_INSTANCE_ID_BYTES = 200;

/**
 * The id of a run started without one: `${workflow}-${uuid}`, the workflow name cut short when the
 * whole would break the run-id rule (defaultIdPrefix). Always a valid run id (checkRunId) whose
 * effect keys fit, whatever the workflow's effect node names.
 */
export function defaultRunId(workflow: string): string {
  const suffix = `-${randomUUID()}`;
  return `${defaultIdPrefix(workflow, suffix.length)}${suffix}`;
}

/**
 * The id of a fork made without one: `${sourceRunId}.fork-${8 hex}`, the source id cut short when
 * the whole would break the run-id rule (defaultIdPrefix). Always a valid run id whose effect keys
 * fit, whatever the workflow's effect node names.
 */
export function defaultForkRunId(sourceRunId: string): string {
  const suffix = `.fork-${randomUUID().slice(0, 8)}`;
  return `${defaultIdPrefix(sourceRunId, suffix.length)}${suffix}`;
}

/**
 * The longest escaped run id (escapeKeyPart) whose effect keys fit the log's names with any node
 * name: a node name of MAX_NODE_NAME_BYTES bytes all "%" or "/" escapes to three times as many,
 * and a key adds two "/" and at most ten digits of seq.
 */
export const MAX_DEFAULT_ID_KEY_BYTES = MAX_KEY_BYTES - 3 * MAX_NODE_NAME_BYTES - 2 - 10;

/**
 * The start of `text` that a default id puts before its `suffixBytes`-byte ASCII suffix (which
 * holds a visible character and no "%" or "/"): whole characters (a surrogate pair is never
 * split) while the id stays within MAX_RUN_ID_BYTES UTF-8 bytes and its escaped form within
 * MAX_DEFAULT_ID_KEY_BYTES; a control character or line separator (legal in a workflow name,
 * not in a run id) and a lone surrogate become "_". The suffix holds a visible character, so the
 * id has one whatever the prefix keeps.
 */
function defaultIdPrefix(text: string, suffixBytes: number): string {
  const maxBytes = MAX_RUN_ID_BYTES - suffixBytes;
  const maxKeyBytes = MAX_DEFAULT_ID_KEY_BYTES - suffixBytes;
  let out = '';
  let bytes = 0;
  let keyBytes = 0;
  for (const character of text) {
    // By code point, not with CONTROL: no Unicode-property expression to compile (below).
    const code = character.codePointAt(0)!;
    const refused = code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029 || (code >= 0xd800 && code <= 0xdfff);
    const c = refused ? '_' : character;
    const size = utf8Bytes(c.codePointAt(0)!);
    const keySize = c === '%' || c === '/' ? 3 : size;
    if (bytes + size > maxBytes || keyBytes + keySize > maxKeyBytes) break;
    out += c;
    bytes += size;
    keyBytes += keySize;
  }
  return out;
}

/** How many bytes UTF-8 takes for the code point (a scalar value; surrogates are replaced above). */
function utf8Bytes(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/** Control characters (C0, DEL, C1) and the line and paragraph separators. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;
/** A character people can see and type: a letter, a digit, punctuation or a symbol. */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;
/**
 * Printable ASCII, space to tilde: the usual run id. It holds no surrogate and no control
 * character, takes one UTF-8 byte a character, and every character but the space is visible, so
 * the rule below reduces to two cheap checks. Why a fast path: the two Unicode-property
 * expressions above cost about 2 ms to compile on their first use, a tenth of a fresh process's
 * resume (bench/README.md, resume suite); ids.test.ts checks both paths agree.
 */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const NOT_ONLY_SPACES = /[^ ]/;

/**
 * Throws RunIdInvalidError unless `runId` is a run id REMIT accepts (docs/guide.md, "Limits"):
 * a string of well-formed Unicode (no lone surrogate, which UTF-8 stores cannot keep), at most
 * MAX_RUN_ID_BYTES UTF-8 bytes, without control characters or line separators, and with at least
 * one visible character (a letter, digit, punctuation or symbol: not only spaces or zero-width
 * characters). The same rule on every store, so an id is stored, listed and recovered as given.
 */
/** `argument`: where the id came from, when not an argument named runId (`newRunId` of fork). */
export function checkRunId(runId: unknown, argument?: string, subject?: ErrorSubject): asserts runId is string {
  if (typeof runId !== 'string' || runId.length === 0) throw new RunIdInvalidError(runId, 'must be a non-empty string', argument, subject);
  const problem = PRINTABLE_ASCII.test(runId) ? printableAsciiRunIdProblem(runId) : runIdProblem(runId);
  if (problem !== null) throw new RunIdInvalidError(runId, problem, argument, subject);
}

/** What the rule finds wrong with a non-empty printable-ASCII id, or null. */
function printableAsciiRunIdProblem(runId: string): string | null {
  if (runId.length > MAX_RUN_ID_BYTES) return `over ${MAX_RUN_ID_BYTES} UTF-8 bytes`;
  if (!NOT_ONLY_SPACES.test(runId)) return NO_VISIBLE_CHARACTER;
  return null;
}

const NO_VISIBLE_CHARACTER = 'has no visible character (a letter, digit, punctuation or symbol); it is only spaces or invisible characters';

/** What the rule finds wrong with a non-empty id, or null: the full rule, for any string. */
export function runIdProblem(runId: string): string | null {
  if (!isWellFormedUnicode(runId)) return 'is not well-formed Unicode: it holds a lone UTF-16 surrogate, which no store can keep';
  if (utf8(runId).length > MAX_RUN_ID_BYTES) return `over ${MAX_RUN_ID_BYTES} UTF-8 bytes`;
  if (CONTROL.test(runId)) return 'contains control characters or line separators';
  if (!VISIBLE.test(runId)) return NO_VISIBLE_CHARACTER;
  return null;
}

/** A key component made unable to contain the separator: "%" → "%25", then "/" → "%2F". */
export function escapeKeyPart(part: string): string {
  return part.replaceAll('%', '%25').replaceAll('/', '%2F');
}

function unescapeKeyPart(part: string): string {
  return part.replaceAll('%2F', '/').replaceAll('%25', '%');
}

/** The largest sequence number a log can hold (a u32 field, docs/log-format.md). */
export const MAX_SEQ = 0xffff_ffff;

/** Whether `value` can be a sequence number: an integer from 0 to MAX_SEQ. */
export function isSeq(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_SEQ;
}

/** What a sequence number argument must be, for error messages. */
export const SEQ_EXPECTED = `an integer from 0 to ${MAX_SEQ} (the seq of a record, as \`remit inspect\` lists them)`;

/**
 * The idempotency key of the effect instance whose EFFECT_INTENT is at `intentSeq` in run `runId`
 * (the run's effective id: a fork's own): `${esc(runId)}/${esc(node)}/${intentSeq}`, where esc
 * writes "%" as "%25" and "/" as "%2F". No component can contain "/", so the key splits back into
 * exactly one (run id, node, seq): two different effect instances never share a key, whatever
 * their names hold (run `a:b` node `c` and run `a` node `b:c` have distinct keys, as do run `a/b`
 * node `c` and run `a` node `b/c`). Recorded in the intent record; later attempts read it from
 * there, so a key once written never changes (keys of runs written before this form, which was
 * `${runId}:${node}:${intentSeq}`, keep that form).
 */
export function effectKey(runId: string, node: string, intentSeq: number): string {
  return `${escapeKeyPart(runId)}/${escapeKeyPart(node)}/${intentSeq}`;
}

/** The (run id, node, intent seq) of a key written by effectKey; null for any other string. */
export function parseEffectKey(key: string): { runId: string; node: string; intentSeq: number } | null {
  const parts = key.split('/');
  if (parts.length !== 3 || !/^(0|[1-9][0-9]*)$/.test(parts[2]!)) return null;
  const [run, node] = [parts[0]!, parts[1]!];
  // Only what escapeKeyPart writes: every "%" starts "%25" or "%2F".
  if (/%(?!25|2F)/.test(run) || /%(?!25|2F)/.test(node)) return null;
  return { runId: unescapeKeyPart(run), node: unescapeKeyPart(node), intentSeq: Number(parts[2]) };
}

/** The longest key this run can write: its id, its longest node name, a 10-digit seq. */
export function longestEffectKeyBytes(runId: string, nodeNames: Iterable<string>): number {
  let longestNode = 0;
  for (const name of nodeNames) longestNode = Math.max(longestNode, utf8(escapeKeyPart(name)).length);
  return utf8(escapeKeyPart(runId)).length + longestNode + '/'.length * 2 + 10;
}

/**
 * Throws RunIdInvalidError when an effect key of run `runId` could exceed the log's 1024-byte names
 * (possible only when both the run id and a node name are long and full of "%" or "/", which the
 * key writes as three bytes each). `argument`: where the id came from, as for checkRunId.
 */
export function checkEffectKeysFit(runId: string, effectNodeNames: Iterable<string>, argument?: string, subject?: ErrorSubject): void {
  const longest = longestEffectKeyBytes(runId, effectNodeNames);
  if (longest > MAX_KEY_BYTES) {
    throw new RunIdInvalidError(runId, `its effect keys could reach ${longest} bytes, over the log's ${MAX_KEY_BYTES}-byte names ("%" and "/" take 3 bytes in a key)`, argument, subject);
  }
}

/** The instance id of a Remit created without one: `remit-${uuid}`. */
export function defaultInstanceId(): string {
  return `remit-${randomUUID()}`;
}

/** Throws OptionInvalidError unless `id` can name a sequencer instance in a lease. */
export function checkInstanceId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) throw new OptionInvalidError('instanceId', id, 'must be a non-empty string');
  // Written as the owner of every attempt it claims: UTF-8, which cannot keep a lone surrogate.
  if (!isWellFormedUnicode(id)) throw new OptionInvalidError('instanceId', id, 'is not well-formed Unicode (a lone UTF-16 surrogate)');
  if (utf8(id).length > MAX_INSTANCE_ID_BYTES) throw new OptionInvalidError('instanceId', id, `is over ${MAX_INSTANCE_ID_BYTES} UTF-8 bytes`);
  // The run-id rule's set: C0, DEL, C1 and the line and paragraph separators.
  if (CONTROL.test(id)) throw new OptionInvalidError('instanceId', id, 'contains control characters or line separators');
  // In a worker thread the owner written is `${id}#thread-N`: an id holding `#` could be another
  // thread's owner (`pod#thread-2` on the main thread, `pod` in thread 2), whose running call this
  // instance would take for an abandoned attempt of its own and call the handler again.
  if (id.includes('#')) throw new OptionInvalidError('instanceId', id, "contains '#', which REMIT keeps for the thread or cluster worker an instance runs in (pod-1#thread-3, pod-1#worker-2)");
}

/** The id of the interrupt parked by the INTERRUPT_PARKED record at `parkedSeq`: `node@seq`. */
export function interruptId(node: string, parkedSeq: number): string {
  return `${node}@${parkedSeq}`;
}

/** The node named by an interrupt id (the part before its last `@`; empty when there is none). */
export function interruptNode(id: string): string {
  return id.slice(0, Math.max(0, id.lastIndexOf('@')));
}

/** What an interrupt id must look like, for error messages. */
export const INTERRUPT_ID_EXPECTED = 'an interrupt id node@seq, e.g. managerApproval@5 (as start, resume, status and inspect report it)';

/**
 * The node and park seq of an interrupt id `node@seq`, or null when `id` cannot be one: not a
 * string, no node before the last `@`, or a seq that is not written as interruptId() writes it
 * (decimal digits without leading zeros, at most MAX_SEQ).
 */
export function parseInterruptId(id: unknown): { node: string; parkedSeq: number } | null {
  if (typeof id !== 'string') return null;
  const at = id.lastIndexOf('@');
  if (at <= 0) return null;
  const digits = id.slice(at + 1);
  if (!/^(0|[1-9][0-9]{0,9})$/.test(digits)) return null;
  const parkedSeq = Number(digits);
  return isSeq(parkedSeq) ? { node: id.slice(0, at), parkedSeq } : null;
}
