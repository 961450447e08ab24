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
  }
}

/** The decoded part of a fixture's JSON, from the log bytes. */
export function decodedFixtureFields(log: Uint8Array): Record<string, unknown> {
  const d = decodeLog(log);
  return {
    records: d.records.map(recordToDocJson),
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
  recovery_hex: string;
  admissions: Array<{ request_hex: string; request: string; admission_hex: string }>;
}
