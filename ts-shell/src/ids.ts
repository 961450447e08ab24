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

/** Throws RunIdInvalidError unless `runId` is a run id REMIT accepts (docs/guide.md, "Limits"). */
export function checkRunId(runId: string): void {
  if (typeof runId !== 'string' || runId.length === 0) throw new RunIdInvalidError(String(runId), 'must be a non-empty string');
  if (utf8(runId).length > MAX_RUN_ID_BYTES) throw new RunIdInvalidError(runId, `over ${MAX_RUN_ID_BYTES} UTF-8 bytes`);
  if (/[\u0000-\u001f\u007f]/.test(runId)) throw new RunIdInvalidError(runId, 'contains control characters');
}

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
