/**
 * Every identifier format REMIT writes or parses, in one place: run ids (default and fork ids, and
 * the rule a run id must follow), effect idempotency keys and interrupt ids. Keys and interrupt
 * ids are positional (docs/architecture.md, decision 4): they are derived from the log, never from
 * a clock or a counter kept elsewhere, so every process that reads the log derives the same ones.
 */

import { randomUUID } from 'node:crypto';
import { RunIdInvalidError } from './errors.js';
import { utf8 } from './json.js';

/** Run ids are at most this many UTF-8 bytes (so that an effect key fits the log's 1024-byte names). */
export const MAX_RUN_ID_BYTES = 200;

/** The id of a run started without one: `${workflow}-${uuid}`. */
export function defaultRunId(workflow: string): string {
  return `${workflow}-${randomUUID()}`;
}

/** The id of a fork made without one: `${sourceRunId}.fork-${8 hex}`. */
export function defaultForkRunId(sourceRunId: string): string {
  return `${sourceRunId}.fork-${randomUUID().slice(0, 8)}`;
}

/** A UTF-16 surrogate not paired with its other half (in u mode, a pair is one code point). */
const LONE_SURROGATE = /\p{Cs}/u;
/** Control characters (C0, DEL, C1) and the line and paragraph separators. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;
/** A character people can see and type: a letter, a digit, punctuation or a symbol. */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;

/**
 * Throws RunIdInvalidError unless `runId` is a run id REMIT accepts (docs/guide.md, "Limits"):
 * a string of well-formed Unicode (no lone surrogate, which UTF-8 stores cannot keep), at most
 * MAX_RUN_ID_BYTES UTF-8 bytes, without control characters or line separators, and with at least
 * one visible character (a letter, digit, punctuation or symbol: not only spaces or zero-width
 * characters). The same rule on every store, so an id is stored, listed and recovered as given.
 */
export function checkRunId(runId: unknown): asserts runId is string {
  if (typeof runId !== 'string' || runId.length === 0) throw new RunIdInvalidError(runId, 'must be a non-empty string');
  if (LONE_SURROGATE.test(runId)) throw new RunIdInvalidError(runId, 'is not well-formed Unicode: it holds a lone UTF-16 surrogate, which no store can keep');
  if (utf8(runId).length > MAX_RUN_ID_BYTES) throw new RunIdInvalidError(runId, `over ${MAX_RUN_ID_BYTES} UTF-8 bytes`);
  if (CONTROL.test(runId)) throw new RunIdInvalidError(runId, 'contains control characters or line separators');
  if (!VISIBLE.test(runId)) throw new RunIdInvalidError(runId, 'has no visible character (a letter, digit, punctuation or symbol); it is only spaces or invisible characters');
}

/** Whether `name` (a workflow or node name) is well-formed Unicode: UTF-8 keeps it exactly. */
export function isWellFormedName(name: string): boolean {
  return !LONE_SURROGATE.test(name);
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
 * (the run's effective id: a fork's own). Recorded in the intent record; later attempts read it
 * from there, so a key once written never changes.
 */
export function effectKey(runId: string, node: string, intentSeq: number): string {
  return `${runId}:${node}:${intentSeq}`;
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
