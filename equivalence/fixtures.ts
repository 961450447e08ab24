/**
 * Committed fixtures (equivalence/fixtures/): logs as binary files with their decoded records and
 * expected encodings in JSON, read by the TypeScript tests here and meant to be readable by the
 * Rust tests. JSON uses the field names of docs/log-format.md and docs/core-api.md; every byte
 * string is lower-case hex. `make-fixtures.ts` writes them; fixtures.test.ts checks them.
 *
 * NAME.bin            the log bytes
 * NAME.json           {
 *   "note": what the log shows,
 *   "log_hex": the log bytes again (for readers that prefer JSON),
 *   "records": [{ "seq", "kind", "kind_name", ...payload fields by their doc names }],
 *   "offsets": start offset of each decoded record,
 *   "durable_len", "torn_len",
 *   "codec_error": null | { "code", "code_name", "seq", "offset", "kind" }   (framing/payload only),
 *   "recovery_hex": the expected recovery encoding,
 *   "admissions": [{ "request_hex", "request", "admission_hex" }]
 * }
 */

import { fileURLToPath } from 'node:url';
import { decodeLog } from 'remit/core';
import { RecordKind, type LogRecord } from 'remit/core';
import { hex } from './compare.js';

export const FIXTURES_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));

const KIND_NAMES = Object.fromEntries(Object.entries(RecordKind).map(([k, v]) => [v, k])) as Record<number, string>;

/** A record as JSON with the doc's field names and hex bytes. */
export function recordToDocJson(r: LogRecord): Record<string, unknown> {
  const head = { seq: r.seq, kind: r.kind, kind_name: KIND_NAMES[r.kind] };
  switch (r.kind) {
    case RecordKind.RUN_STARTED:
      return {
        ...head, run_id: hex(r.runId), workflow: hex(r.workflow), version: hex(r.version), fingerprint: hex(r.fingerprint),
        definition: hex(r.definition), node_count: r.nodes.length,
        nodes: r.nodes.map((n) => ({ node: hex(n.name), node_kind: n.kind })), start_node: hex(r.startNode), state: hex(r.state),
      };
    case RecordKind.NODE_COMPLETED:
      return { ...head, node: hex(r.node), next: hex(r.next), state_form: r.stateForm, state: hex(r.state) };
    case RecordKind.EFFECT_INTENT:
      return { ...head, node: hex(r.node), key: hex(r.key) };
    case RecordKind.EFFECT_DONE:
      return { ...head, node: hex(r.node), key: hex(r.key), result: hex(r.result) };
    case RecordKind.INTERRUPT_PARKED:
      return { ...head, node: hex(r.node), interrupt_id: hex(r.interruptId) };
    case RecordKind.RESUME_CLAIMED:
      return { ...head, interrupt_id: hex(r.interruptId), value: hex(r.value) };
    case RecordKind.FORKED:
      return { ...head, source_run_id: hex(r.sourceRunId), source_seq: r.sourceSeq, run_id: hex(r.runId), intent: hex(r.intent) };
    case RecordKind.RUN_COMPLETED:
      return head;
    case RecordKind.RUN_FAILED:
      return { ...head, node: hex(r.node), code: hex(r.code), message: hex(r.message) };
    case RecordKind.EFFECT_ATTEMPT:
      return { ...head, node: hex(r.node), key: hex(r.key), attempt: r.attempt, lease: hex(r.lease) };
    case RecordKind.EFFECT_RELEASED:
      return { ...head, node: hex(r.node), key: hex(r.key), attempt: r.attempt, reason: hex(r.reason) };
  }
}

/** The decoded part of a fixture's JSON, from the log bytes. */
export function decodedFixtureFields(log: Uint8Array): Record<string, unknown> {
  const d = decodeLog(log);
  return {
    records: d.records.map(recordToDocJson),
    formats: d.versions,
    offsets: d.offsets,
    durable_len: d.durableLen,
    torn_len: d.tornLen,
    codec_error: d.error
      ? { code: d.error.code, code_name: d.error.codeName, seq: d.error.seq, offset: d.error.offset, kind: d.error.kind }
      : null,
  };
}

export interface FixtureJson {
  note: string;
  log_hex: string;
  records: unknown[];
  offsets: number[];
  durable_len: number;
  torn_len: number;
  codec_error: unknown;
  /** Format of each record (1 or 2). */
  formats: number[];
  recovery_hex: string;
  /**
   * Format-1 fixtures only: the recovery encoding of core API 1, committed before format 2
   * existed and never regenerated. The API-2 encoding with the API-2 fields taken out
   * (projectToApiV1) must equal it: a format-1 log recovers exactly as before.
   */
  recovery_api1_hex?: string;
  admissions: Array<{ request_hex: string; request: string; admission_hex: string }>;
}

const u32 = (b: Uint8Array, i: number) => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;

/**
 * The recovery encoding of core API 1 that an API-2 encoding stands for: INVOKE_EFFECT's
 * next_attempt and each effect entry's attempts taken out (docs/core-api.md, "API 1 and API 2").
 * Throws on a value API 1 cannot express (AWAIT_ATTEMPT, a next attempt other than 1, attempts
 * other than 0): a format-1 log must never produce one.
 */
export function projectToApiV1(enc: Uint8Array): Uint8Array {
  if (enc[0] === 0) return enc.slice();
  const out: number[] = [];
  let at = 0;
  const copy = (n: number) => { for (let i = 0; i < n; i++) out.push(enc[at + i]!); at += n; };
  const field = () => copy(4 + u32(enc, at));
  const zeroOrOne = (want: number, what: string) => {
    if (u32(enc, at) !== want) throw new Error(`not an API-1 value: ${what} is ${u32(enc, at)}`);
    at += 4;
  };
  copy(14);
  for (let i = 0; i < 4; i++) field();
  copy(16);
  const tag = enc[at]!;
  copy(1);
  if (tag === 1 || tag === 2 || tag === 5) field();
  else if (tag === 3) { field(); field(); copy(4); zeroOrOne(1, 'next_attempt'); }
  else if (tag === 4 || tag === 7) { field(); field(); copy(8); }
  else if (tag === 6) { field(); field(); copy(4); }
  else if (tag !== 0 && tag !== 8) throw new Error(`not an API-1 value: action tag ${tag}`);
  const effects = u32(enc, at);
  copy(4);
  for (let i = 0; i < effects; i++) { field(); copy(5); zeroOrOne(0, 'attempts'); }
  copy(enc.length - at);
  return Uint8Array.from(out);
}
