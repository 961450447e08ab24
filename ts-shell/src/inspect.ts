/**
 * A run's log for people: one row per record (seq, kind, node, commit time, sizes, keys) and the
 * recovered summary. A damaged log is shown up to the first bad record, with the error named.
 */

import { decodeLog, LogErrorName } from './core/codec.js';
import { EffectStatus, RecordKind, type LogRecord, type NextAction, type RecoveryCore } from './core/types.js';
import { count, displayText, preview, shown, withArticle } from './display.js';
import { ArgumentInvalidError, suggestCommand } from './errors.js';
import { parseInterruptId } from './ids.js';
import { fromUtf8, toHex } from './json.js';
import { recoverInPieces } from './sequencer/feed-pieces.js';
import { decodeLease } from './sequencer/fence.js';
import { diagnoseRows, type RunDamage } from './sequencer/log-health.js';
import { kindName, STATUS_NAMES } from './sequencer/log-view.js';
import { concatRecords } from './store/common.js';
import type { StoredRecord } from './store/store.js';

/**
 * A store's commit time as ISO 8601. The time is the store's bookkeeping, not part of the checked
 * record, so a value no Date can hold (a hand edit) is shown as it is instead of failing the view.
 */
export function isoTime(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `invalid time (${String(ms)})` : date.toISOString();
}

export interface InspectedRecord {
  seq: number;
  kind: string;
  /** The record's log format (1 or 2; the shell writes 2). */
  format: number;
  node: string | null;
  committedAt: string;
  /** The whole record's bytes, framing included. */
  bytes: number;
  /** Bytes of the state payload (RUN_STARTED, NODE_COMPLETED) and its form. */
  stateBytes?: number;
  stateForm?: 'snapshot' | 'delta';
  next?: string | null;
  key?: string;
  interruptId?: string;
  /** EFFECT_ATTEMPT / EFFECT_RELEASED: the attempt number. */
  attempt?: number;
  /** Bytes of an effect result or resume value, or the fork intent and failure as text (their first 200 characters: `lineage` and `failure` hold them whole). */
  payloadBytes?: number;
  detail?: string;
}

export interface RunInspection {
  runId: string;
  workflow: string | null;
  version: string | null;
  fingerprint: string | null;
  status: string;
  /** What the core says comes next, e.g. "AWAIT_RESUME managerApproval@6". */
  nextAction: string;
  headSeq: number;
  records: InspectedRecord[];
  effects: Array<{ node: string; status: string; doneCount: number; attempts: number }>;
  interruptsParked: number;
  interruptsClaimed: number;
  lineage: Array<{ sourceRunId: string; sourceSeq: number; runId: string; forkSeq: number; intent: string }>;
  failure?: { node: string; code: string; message: string };
  /** Set when the log is damaged: the first bad record. */
  error?: { code: string; seq: number; offset: number };
  /** true for a fork nobody has continued (its last record is FORKED): recoverAll leaves it alone (RunSummary.undrivenFork). */
  undrivenFork?: true;
  /** Set when the log is damaged: which record, how, whether `repair` removes it, what to do. */
  damage?: RunDamage;
  totals: { records: number; bytes: number; stateBytes: number };
}

const EFFECT_STATUS_NAMES: Record<number, string> = {
  [EffectStatus.FRESH]: 'fresh',
  [EffectStatus.INTENT_ONLY]: 'intent-only',
  [EffectStatus.DONE]: 'done',
};

/** The run's stored records described; none at all: a run the store lists without records (NO_RECORDS damage). */
export function inspectLog(runId: string, stored: StoredRecord[], core: RecoveryCore): RunInspection {
  const log = concatRecords(stored);
  const decoded = decodeLog(log);
  const records = decoded.records.map((r, i) => describeRecord(r, stored[i]!, decoded.versions[i]!));
  const totals = {
    records: stored.length,
    bytes: log.length,
    stateBytes: records.reduce((n, r) => n + (r.stateBytes ?? 0), 0),
  };
  const recovery = recoverInPieces(core, log);
  const damage = diagnoseRows(runId, stored, recovery);
  // A run the store lists without records (NO_RECORDS) has no record to show, damaged or not.
  if (damage !== null && stored.length > 0) {
    const bad = stored.find((r) => r.seq === damage.seq);
    records.splice(damage.seq);
    records.push({
      seq: damage.seq, kind: 'DAMAGED', format: bad?.bytes[8] ?? 0, node: null, committedAt: bad === undefined ? '-' : isoTime(bad.committedAtMs),
      bytes: bad?.bytes.length ?? 0, detail: `${damage.code}${damage.recordKind === null ? '' : ` (was ${damage.recordKind})`}`,
    });
  }
  if (!recovery.ok || damage !== null) {
    // What the run is, from the core when it recovered, else from record 0 when that one is intact
    // (damage after it), as runs() names the workflow of a damaged run.
    const first = decoded.records[0];
    const known = recovery.ok && recovery.recordCount > 0 ? { workflow: fromUtf8(recovery.workflow), version: fromUtf8(recovery.version), fingerprint: toHex(recovery.fingerprint) }
      : first?.kind === RecordKind.RUN_STARTED && (damage === null || damage.seq > 0) ? { workflow: fromUtf8(first.workflow), version: fromUtf8(first.version), fingerprint: toHex(first.fingerprint) }
      : { workflow: null, version: null, fingerprint: null };
    const at = damage ?? { code: recovery.ok ? 'UNKNOWN' : LogErrorName[recovery.code] ?? String(recovery.code), seq: recovery.ok ? 0 : recovery.seq, offset: recovery.ok ? 0 : recovery.offset };
    const out: RunInspection = {
      runId, ...known, status: 'damaged', nextAction: 'NONE',
      headSeq: at.seq - 1, records, effects: [], interruptsParked: 0, interruptsClaimed: 0, lineage: [],
      error: { code: at.code, seq: at.seq, offset: at.offset },
      totals,
    };
    if (damage !== null) out.damage = damage;
    return out;
  }
  const out: RunInspection = {
    runId,
    workflow: fromUtf8(recovery.workflow),
    version: fromUtf8(recovery.version),
    fingerprint: toHex(recovery.fingerprint),
    status: STATUS_NAMES[recovery.status],
    nextAction: actionText(recovery.action),
    headSeq: recovery.recordCount - 1,
    records,
    effects: recovery.effects.map((e) => ({
      node: fromUtf8(e.node), status: EFFECT_STATUS_NAMES[e.status] ?? '?', doneCount: e.doneCount, attempts: e.attempts,
    })),
    interruptsParked: recovery.interruptsParked,
    interruptsClaimed: recovery.interruptsClaimed,
    lineage: recovery.lineage.map((l) => ({
      sourceRunId: fromUtf8(l.sourceRunId), sourceSeq: l.sourceSeq, runId: fromUtf8(l.runId), forkSeq: l.forkSeq, intent: fromUtf8(l.intent),
    })),
    totals,
  };
  if (recovery.failure) {
    out.failure = { node: fromUtf8(recovery.failure.node), code: fromUtf8(recovery.failure.code), message: fromUtf8(recovery.failure.message) };
  }
  if (decoded.error) out.error = { code: decoded.error.codeName, seq: decoded.error.seq, offset: decoded.error.offset };
  if (out.status === 'running' && records[records.length - 1]?.kind === 'FORKED') out.undrivenFork = true;
  return out;
}

function describeRecord(r: LogRecord, stored: StoredRecord, format: number): InspectedRecord {
  const base: InspectedRecord = {
    seq: r.seq,
    kind: kindName(r.kind),
    format,
    node: null,
    committedAt: isoTime(stored.committedAtMs),
    bytes: stored.bytes.length,
  };
  switch (r.kind) {
    case RecordKind.RUN_STARTED:
      return { ...base, stateBytes: r.state.length, stateForm: 'snapshot', next: fromUtf8(r.startNode), detail: `${fromUtf8(r.workflow)} v${fromUtf8(r.version)}, ${r.nodes.length} nodes` };
    case RecordKind.NODE_COMPLETED:
      return {
        ...base, node: fromUtf8(r.node), stateBytes: r.state.length, stateForm: r.stateForm === 0 ? 'snapshot' : 'delta',
        next: r.next.length === 0 ? null : fromUtf8(r.next),
      };
    case RecordKind.EFFECT_INTENT:
      return { ...base, node: fromUtf8(r.node), key: fromUtf8(r.key) };
    case RecordKind.EFFECT_DONE:
      return { ...base, node: fromUtf8(r.node), key: fromUtf8(r.key), payloadBytes: r.result.length };
    case RecordKind.INTERRUPT_PARKED:
      return { ...base, node: fromUtf8(r.node), interruptId: fromUtf8(r.interruptId) };
    case RecordKind.RESUME_CLAIMED: {
      // The claim names its interrupt, not its node: the node is the id's (`node@seq`).
      const interruptId = fromUtf8(r.interruptId);
      return { ...base, node: parseInterruptId(interruptId)?.node ?? null, interruptId, payloadBytes: r.value.length };
    }
    case RecordKind.FORKED:
      return { ...base, detail: `from ${fromUtf8(r.sourceRunId)}@${r.sourceSeq} as ${fromUtf8(r.runId)}, intent ${preview(fromUtf8(r.intent))}` };
    case RecordKind.RUN_COMPLETED:
      return base;
    case RecordKind.RUN_FAILED:
      return { ...base, node: r.node.length ? fromUtf8(r.node) : null, detail: `${fromUtf8(r.code)}: ${preview(fromUtf8(r.message))}` };
    case RecordKind.EFFECT_ATTEMPT:
      return { ...base, node: fromUtf8(r.node), key: fromUtf8(r.key), attempt: r.attempt, detail: leaseText(r.lease) };
    case RecordKind.EFFECT_RELEASED:
      return { ...base, node: fromUtf8(r.node), key: fromUtf8(r.key), attempt: r.attempt, detail: `released: ${fromUtf8(r.reason)}` };
  }
}

/** A lease for people: its owner and its end as ISO 8601; a lease this library did not write, as it is. */
function leaseText(bytes: Uint8Array): string {
  const lease = decodeLease(bytes);
  if (lease === null) return `lease (not one this library writes) ${preview(fromUtf8(bytes))}`;
  return `lease of ${displayText(lease.owner)} until ${isoTime(lease.leaseUntilMs)}`;
}

function actionText(action: NextAction): string {
  switch (action.tag) {
    case 'NONE':
    case 'FINISH_RUN':
      return action.tag;
    case 'AWAIT_RESUME':
    case 'FINISH_INTERRUPT':
      return `${action.tag} ${fromUtf8(action.interruptId)}`;
    case 'INVOKE_EFFECT':
      return `${action.tag} ${fromUtf8(action.node)} key ${fromUtf8(action.key)} attempt ${action.nextAttempt}`;
    case 'AWAIT_ATTEMPT':
      return `${action.tag} ${fromUtf8(action.node)} key ${fromUtf8(action.key)} attempt ${action.attempt} (seq ${action.attemptSeq})`;
    case 'FINISH_EFFECT':
      return `${action.tag} ${fromUtf8(action.node)} key ${fromUtf8(action.key)}`;
    default:
      return `${action.tag} ${fromUtf8(action.node)}`;
  }
}


/**
 * A fixed-width table for a terminal, with the run's header, totals, effects, lineage, failure
 * and damage. Every piece of text from the log (names, ids, keys, the version, intents, failure
 * messages) is printed through displayText (display.ts): a control character in a name cannot
 * clear the terminal or forge a line.
 */
export function renderInspection(inspection: RunInspection): string {
  if (inspection === null || typeof inspection !== 'object' || typeof inspection.runId !== 'string' || !Array.isArray(inspection.records)) {
    const got = inspection === null ? 'null' : Array.isArray(inspection) ? 'an array' : typeof inspection === 'object' ? 'an object without runId and records' : typeof inspection;
    throw new ArgumentInvalidError('inspection', 'what remit.inspect(runId) returned (a RunInspection)', got);
  }
  const problem = renderingProblem(inspection);
  if (problem !== null) {
    throw new ArgumentInvalidError(`inspection.${problem.path}`, `${problem.expected}, as remit.inspect(runId) returns it`, problem.got, { runId: inspection.runId });
  }
  const lines: string[] = [];
  const head = [shown`run ${inspection.runId}`];
  if (inspection.workflow) head.push(shown`workflow ${inspection.workflow} v${inspection.version}`);
  head.push(shown`status ${inspection.status}`, shown`next ${inspection.nextAction}`);
  lines.push(head.join('  '));
  if (inspection.fingerprint) lines.push(shown`fingerprint ${inspection.fingerprint.slice(0, 16)}…`);
  const rows = inspection.records.map((r) => [
    String(r.seq),
    r.kind,
    r.node ?? '-',
    r.committedAt.replace('T', ' ').replace('Z', ''),
    String(r.bytes),
    r.stateBytes === undefined ? '' : `${r.stateBytes} ${r.stateForm === 'snapshot' ? 'snap' : 'delta'}`,
    recordDetail(r),
  ]);
  // One line at a time, not push(...table()): a long run has more lines than a call takes arguments.
  for (const line of table(['seq', 'kind', 'node', 'committed (UTC)', 'bytes', 'state', 'detail'], rows, [true, false, false, false, true, true, false])) lines.push(line);
  const t = inspection.totals;
  lines.push(`${count(t.records, 'record')}, ${count(t.bytes, 'byte')} (${t.stateBytes} of state)`);
  if (inspection.effects.length > 0) {
    const attempts = (n: number) => (n > 0 ? `, ${count(n, 'attempt')}` : '');
    lines.push(`effects: ${inspection.effects.map((e) => shown`${e.node} ${e.status} (done ${e.doneCount}×${attempts(e.attempts)})`).join(', ')}`);
  }
  lines.push(`interrupts: ${inspection.interruptsParked} parked, ${inspection.interruptsClaimed} claimed`);
  for (const l of inspection.lineage) lines.push(shown`forked from ${l.sourceRunId} at seq ${l.sourceSeq} (fork record ${l.forkSeq}), intent ${preview(l.intent)}`);
  if (inspection.undrivenFork) lines.push(shown`fork, not continued: recoverAll leaves it alone; continue it with ${suggestCommand('continue', inspection.runId)}`);
  if (inspection.failure) lines.push(shown`failed at ${inspection.failure.node || '-'}: ${inspection.failure.code}: ${inspection.failure.message}`);
  const d = inspection.damage;
  if (d !== undefined) {
    const what =
      d.kind === 'torn' ? `the last record is incomplete (${count(d.storedBytes, 'byte')} stored)`
      : d.kind === 'empty' ? 'the last record is empty (0 bytes)'
      : d.code === 'NO_RECORDS' ? `${d.code}: the store lists the run but keeps none of its records`
      : `${d.code}: the record fails its integrity check`;
    lines.push(shown`DAMAGED at seq ${d.seq} (byte offset ${d.offset}): ${what}; nothing from it on was loaded`);
    lines.push(shown`  ${d.repairable ? 'repairable' : 'not repairable'}: ${d.why}`);
    lines.push(shown`  what to do: ${d.advice}`);
  } else if (inspection.error) {
    lines.push(shown`DAMAGED at seq ${inspection.error.seq}: ${inspection.error.code} (byte offset ${inspection.error.offset}); nothing after it was loaded`);
  }
  return lines.join('\n');
}

type Shape = 'string' | 'number' | 'object' | 'array';
/** The fields renderInspection reads, by the shape it needs ('?': may be missing or null). */
const RENDERED_FIELDS: Array<[string, Shape, boolean?]> = [
  ['status', 'string'], ['nextAction', 'string'], ['headSeq', 'number'], ['interruptsParked', 'number'], ['interruptsClaimed', 'number'],
  ['totals', 'object'], ['effects', 'array'], ['lineage', 'array'], ['failure', 'object', true], ['damage', 'object', true], ['error', 'object', true],
];
const RECORD_FIELDS: Array<[string, Shape, boolean?]> = [['seq', 'number'], ['kind', 'string'], ['committedAt', 'string'], ['bytes', 'number']];
const LINEAGE_FIELDS: Array<[string, Shape, boolean?]> = [['sourceRunId', 'string'], ['sourceSeq', 'number'], ['forkSeq', 'number'], ['intent', 'string']];
const TOTALS_FIELDS: Array<[string, Shape, boolean?]> = [['records', 'number'], ['bytes', 'number'], ['stateBytes', 'number']];
const EFFECT_FIELDS: Array<[string, Shape, boolean?]> = [['node', 'string'], ['status', 'string'], ['doneCount', 'number'], ['attempts', 'number']];

function shapeOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/** The first of `fields` of `value` (at `at`) whose shape is not the one named, or null. */
function fieldProblem(value: Record<string, unknown>, at: string, fields: Array<[string, Shape, boolean?]>): { path: string; expected: string; got: string } | null {
  for (const [name, shape, optional] of fields) {
    const field = value[name];
    if (optional && (field === undefined || field === null)) continue;
    if (shapeOf(field) !== shape) return { path: `${at}${name}`, expected: withArticle(shape), got: shapeOf(field) };
  }
  return null;
}

/**
 * Why `inspection` cannot be rendered (a field renderInspection reads is missing or of another
 * type: a hand-made or cut-down object), or null. A JSON round trip of inspect()'s answer renders.
 */
function renderingProblem(inspection: RunInspection): { path: string; expected: string; got: string } | null {
  const top = inspection as unknown as Record<string, unknown>;
  const nested = (list: unknown[], at: string, fields: Array<[string, Shape, boolean?]>) => {
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      if (shapeOf(item) !== 'object') return { path: `${at}[${i}]`, expected: 'an object', got: shapeOf(item) };
      const problem = fieldProblem(item as Record<string, unknown>, `${at}[${i}].`, fields);
      if (problem !== null) return problem;
    }
    return null;
  };
  return fieldProblem(top, '', RENDERED_FIELDS)
    ?? fieldProblem(inspection.totals as unknown as Record<string, unknown>, 'totals.', TOTALS_FIELDS)
    ?? nested(inspection.records, 'records', RECORD_FIELDS)
    ?? nested(inspection.effects, 'effects', EFFECT_FIELDS)
    ?? nested(inspection.lineage, 'lineage', LINEAGE_FIELDS);
}

function recordDetail(r: InspectedRecord): string {
  const parts: string[] = [];
  if (r.next !== undefined) parts.push(r.kind === 'RUN_STARTED' ? `start ${r.next}` : `next ${r.next ?? 'END'}`);
  if (r.key) parts.push(`key ${r.key}`);
  if (r.attempt !== undefined) parts.push(`attempt ${r.attempt}`);
  if (r.interruptId) parts.push(`interrupt ${r.interruptId}`);
  if (r.payloadBytes !== undefined) parts.push(`${r.kind === 'EFFECT_DONE' ? 'result' : 'value'} ${r.payloadBytes} B`);
  if (r.detail) parts.push(r.detail);
  return parts.join(', ');
}

/** A fixed-width table for a terminal; every cell is printed through displayText (display.ts). */
export function table(header: string[], rawRows: string[][], alignRight: boolean[] = []): string[] {
  const rows = rawRows.map((row) => row.map(displayText));
  // A loop, not Math.max(...rows): a store of many runs (or a long run) has more rows than a call takes arguments.
  const widths = header.map((h) => h.length);
  for (const row of rows) {
    for (let i = 0; i < widths.length; i++) widths[i] = Math.max(widths[i]!, (row[i] ?? '').length);
  }
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : alignRight[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [fmt(header), ...rows.map(fmt)];
}

