/**
 * Exhaustive small-scope check: every history of the model over SMALL_WORKFLOW (prepare → charge →
 * approve → end or back to prepare) up to `maxRecords` records, every choice at every step (route,
 * snapshot or delta, fail, fork of the head checkpoint; for the effect in log format 2: claim an
 * attempt, complete it, give it up, or have it taken over), in two trees: runs written in format 2
 * from the start, and runs started in format 1 that may be upgraded to format 2 before any record.
 * Both cores are compared on each log: recover and every admission request at the record
 * boundary, recover at byte cuts inside the last record (torn tails). Histories share prefixes, so
 * the search is a tree and each node is one log. Each node also gets every "wrong next record" from
 * a fixed vocabulary (any node completed with any route, intents, results, attempts and releases,
 * parks and claims with current and other keys/ids/numbers, parks of reserved ids (`node@seq`)
 * naming another node or the next seq, forks naming the right and wrong seq, a
 * second RUN_STARTED, ...) as a leaf, written in the run's format; plus a format-1 record after a
 * format-2 one, and a right next record chained to a wrong predecessor: the error paths,
 * exhaustively.
 *
 *   bash scripts/tsx.sh equivalence/enumerate.ts [--max-records 9] [--cuts edges|all] [--against wasm|reference]
 *     [--formats 2,1] [--no-upgrades] [--oracle] [--help]
 *
 * The command line is checked first (parseEnumerateArgs, with ./cli-args.ts): an unknown
 * option or a bad value is refused on one line, followed by the usage line, with exit code 2.
 */

import { pathToFileURL } from 'node:url';
import { chainOf, concatBytes as concat, encodeRecord, encodeRecordV2 } from 'remit/core';
import { reference } from 'remit/core';
import { RecordKind, type LogRecord, type RecoveryCore } from 'remit/core';
import { loadWasmCore } from 'remit/core';
import { CoreComparison, hex, type Divergence } from './compare.js';
import { allMoves, ModelExecution, SMALL_WORKFLOW, type ModelWorkflow } from './model.js';
import { ModelOracle, loadExtractedModel } from './oracle.js';
import { FEW_MALFORMED_REQUESTS, planRequests, requestsAtCut, requestsAtPrefix } from './requests.js';
import { UsageError, choiceOption, intOption, parseStrict } from './cli-args.js';

export interface EnumerationOptions {
  maxRecords: number;
  /** 'edges': cuts at +1, +11, +12, +13 and end-1 of the last record; 'all': every byte. */
  cuts: 'edges' | 'all';
  /** Also check every wrong next record of the vocabulary at every node (default true). */
  wrongExtensions?: boolean;
  workflow?: ModelWorkflow;
  /** The trees to walk: runs started in these formats (default [2, 1]; format-1 runs may be upgraded). */
  formats?: ReadonlyArray<1 | 2>;
  /** Whether format-1 runs may be upgraded to format 2 (default true; false: the format-1 tree alone). */
  upgrades?: boolean;
  /** Also compare every answer with the extracted model (./oracle.ts). */
  oracle?: ModelOracle | null;
}

export interface EnumerationResult {
  maxRecords: number;
  /** Distinct logs at record boundaries (tree nodes, including the empty log). */
  boundaryLogs: number;
  /** Distinct torn logs checked (byte cuts inside a last record). */
  tornLogs: number;
  /** Logs made of a model history plus one wrong record (mostly errors, some valid). */
  wrongExtensionLogs: number;
  /** Distinct recovery encodings of the boundary logs (by the first core). */
  distinctRecoveries: number;
  /** Distinct outcomes reached: "status/ACTION" pairs and "error N" codes. */
  distinctPhases: number;
  outcomes: string[];
  recoverCalls: number;
  admitCalls: number;
  /** Split-property checks (./compare.ts, `split`). */
  splitChecks: number;
  elapsedMs: number;
  divergence: Divergence | null;
}

class Enumerator {
  private readonly comparison: CoreComparison;
  private readonly recoveries = new Set<string>();
  private readonly phases = new Set<string>();
  boundaryLogs = 0;
  tornLogs = 0;
  wrongExtensionLogs = 0;
  divergence: Divergence | null = null;

  constructor(a: RecoveryCore, private readonly b: RecoveryCore, private readonly options: EnumerationOptions) {
    this.comparison = new CoreComparison(a, b, options.oracle ?? null);
  }

  /** Check one boundary log: its recovery, every request, and torn cuts of its last record. */
  private check(parts: Uint8Array[]): boolean {
    const log = concat(parts);
    const recordCount = parts.length;
    this.boundaryLogs++;
    const plan = planRequests(log, FEW_MALFORMED_REQUESTS);
    this.divergence = this.comparison.recover(log);
    for (const req of requestsAtPrefix(plan, recordCount)) this.divergence ??= this.comparison.admit(log, req);
    // The split property: the log fed as (all but its last record, the last record), the way the
    // sequencer feeds it, with admission from the parent's summary; and as (RUN_STARTED, the rest).
    if (recordCount > 0) {
      const parent = log.length - parts[recordCount - 1]!.length;
      this.divergence ??= this.comparison.split(log, parent, requestsAtPrefix(plan, recordCount - 1));
    }
    if (recordCount > 2) this.divergence ??= this.comparison.split(log, parts[0]!.length);
    if (this.divergence) return false;
    const r = this.b.recover(log);
    this.recoveries.add(hex(this.b.recoverEncoded(log)));
    this.phases.add(r.ok ? `${r.status}/${r.action.tag}` : `error ${r.code}`);
    return this.checkTornCuts(log, parts, plan);
  }

  private checkTornCuts(log: Uint8Array, parts: Uint8Array[], plan: ReturnType<typeof planRequests>): boolean {
    if (parts.length === 0) return true;
    const last = parts[parts.length - 1]!.length;
    const start = log.length - last;
    const cuts = this.options.cuts === 'all'
      ? Array.from({ length: last - 1 }, (_, i) => start + 1 + i)
      : [...new Set([1, 11, 12, 13, last - 1].filter((d) => d > 0 && d < last).map((d) => start + d))];
    for (const cut of cuts) {
      this.tornLogs++;
      const torn = log.subarray(0, cut);
      this.divergence = this.comparison.recover(torn);
      for (const req of requestsAtCut(plan, parts.length - 1)) this.divergence ??= this.comparison.admit(torn, req);
      // Fed as (a torn prefix, the rest): the torn tail stays out of the summary and is fed again.
      this.divergence ??= this.comparison.split(log, cut);
      if (this.divergence) return false;
    }
    return true;
  }

  /** Every wrong next record as a leaf: recover and the cut-point requests. */
  private checkWrongExtensions(ex: ModelExecution, parts: Uint8Array[]): boolean {
    const log = concat(parts);
    const plan = planRequests(log, FEW_MALFORMED_REQUESTS);
    const seq = parts.length;
    const chain = chainOf(parts[parts.length - 1]!);
    const v2 = ex.nextFormat === 2;
    const encoded = wrongNextRecords(ex).map((body) => {
      const r = { ...body, seq } as LogRecord;
      return v2 ? encodeRecordV2(r, chain) : encodeRecord(r);
    });
    // The run's own next records, framed wrongly: chained to another predecessor (BAD_LINK), or in
    // format 1 after format 2 (BAD_VERSION).
    const probe = ex.clone();
    const right = probe.stepMoves()[0];
    if (right) {
      probe.apply(right);
      const next = probe.records[probe.records.length - 1]!;
      if (v2) encoded.push(encodeRecordV2(next, (chain ^ 0x5a5a_5a5a) >>> 0));
      if (ex.versions.includes(2)) encoded.push(encodeRecord(next));
    }
    for (const bytes of encoded) {
      const extended = concat([log, bytes]);
      this.wrongExtensionLogs++;
      this.divergence = this.comparison.recover(extended);
      for (const req of requestsAtCut(plan, parts.length + 1)) this.divergence ??= this.comparison.admit(extended, req);
      // A wrong record fed after the summary of a valid log: the error is the whole log's.
      this.divergence ??= this.comparison.split(extended, log.length);
      if (this.divergence) return false;
      const r = this.b.recover(extended);
      this.phases.add(r.ok ? `${r.status}/${r.action.tag}` : `error ${r.code}`);
    }
    return true;
  }

  /** Depth-first over every move; `parts` are the encoded records of `ex`. */
  walk(ex: ModelExecution, parts: Uint8Array[]): boolean {
    if (!this.check(parts)) return false;
    if (this.options.wrongExtensions !== false && !this.checkWrongExtensions(ex, parts)) return false;
    if (parts.length >= this.options.maxRecords) return true;
    const chain = chainOf(parts[parts.length - 1]!);
    for (const move of allMoves(ex, { upgrades: this.options.upgrades !== false })) {
      const next = ex.clone();
      next.apply(move);
      const at = next.records.length - 1;
      const record = next.records[at]!;
      // A fork rewinds: its prefix is the source's, its FORKED record chains to the checkpoint.
      const prefix = at === parts.length ? parts : parts.slice(0, at);
      const prev = at === parts.length ? chain : chainOf(prefix[prefix.length - 1]!);
      const bytes = next.versions[at] === 2 ? encodeRecordV2(record, prev) : encodeRecord(record);
      if (!this.walk(next, [...prefix, bytes])) return false;
    }
    return true;
  }

  run(): EnumerationResult {
    const t0 = performance.now();
    let ok = this.check([]); // the empty log
    for (const format of this.options.formats ?? [2, 1]) {
      if (!ok || this.options.maxRecords < 1) break;
      const ex = new ModelExecution({ ...(this.options.workflow ?? SMALL_WORKFLOW), startFormat: format });
      ok = this.walk(ex, ex.encodedParts());
    }
    return {
      maxRecords: this.options.maxRecords, boundaryLogs: this.boundaryLogs, tornLogs: this.tornLogs,
      wrongExtensionLogs: this.wrongExtensionLogs,
      distinctRecoveries: this.recoveries.size, distinctPhases: this.phases.size, outcomes: [...this.phases].sort(),
      recoverCalls: this.comparison.stats.recoverCalls, admitCalls: this.comparison.stats.admitCalls,
      splitChecks: this.comparison.stats.splitChecks,
      elapsedMs: performance.now() - t0, divergence: this.divergence,
    };
  }
}

const te = new TextEncoder();
/** A record without its seq (distributes over the union, unlike Omit<LogRecord, 'seq'>). */
type RecordBody = LogRecord extends infer R ? (R extends LogRecord ? Omit<R, 'seq'> : never) : never;

/**
 * The vocabulary of next records, right or wrong, built from the log so far: keys and ids of the
 * last intent and park, and fresh ones; every node completed with every route and the end.
 */
function wrongNextRecords(ex: ModelExecution): RecordBody[] {
  const records = ex.records;
  const head = records.length - 1;
  const wf = ex.workflow;
  let lastKey: Uint8Array = te.encode('k-none');
  let lastId: Uint8Array = te.encode('i-none');
  for (const r of records) {
    if (r.kind === RecordKind.EFFECT_INTENT) lastKey = r.key;
    if (r.kind === RecordKind.INTERRUPT_PARKED) lastId = r.interruptId;
  }
  let lastAttempt = 0;
  for (const r of records) {
    if (r.kind === RecordKind.EFFECT_INTENT) lastAttempt = 0;
    if (r.kind === RecordKind.EFFECT_ATTEMPT) lastAttempt = r.attempt;
  }
  const effectNode = te.encode(wf.nodes.find((n) => n.kind === 'effect')?.name ?? 'none');
  const interruptNode = te.encode(wf.nodes.find((n) => n.kind === 'interrupt')?.name ?? 'none');
  const out: RecordBody[] = [{ ...records[0]! } as RecordBody];
  for (const n of wf.nodes) {
    for (const next of ['', ...wf.nodes.map((m) => m.name)]) {
      out.push({ kind: RecordKind.NODE_COMPLETED, node: te.encode(n.name), next: te.encode(next), stateForm: 0, state: te.encode('{}') });
    }
  }
  const ghost = te.encode('ghost'); // not in the table: UNKNOWN_NODE as node and as next
  out.push({ kind: RecordKind.NODE_COMPLETED, node: ghost, next: new Uint8Array(0), stateForm: 0, state: te.encode('{}') });
  out.push({ kind: RecordKind.NODE_COMPLETED, node: te.encode(wf.start), next: ghost, stateForm: 1, state: te.encode('{}') });
  out.push({ kind: RecordKind.EFFECT_INTENT, node: ghost, key: lastKey });
  for (const key of [lastKey, te.encode('k-other')]) {
    out.push({ kind: RecordKind.EFFECT_INTENT, node: effectNode, key });
    out.push({ kind: RecordKind.EFFECT_DONE, node: effectNode, key, result: te.encode('{}') });
    for (const attempt of new Set([0, lastAttempt, lastAttempt + 1, lastAttempt + 2])) {
      out.push({ kind: RecordKind.EFFECT_ATTEMPT, node: effectNode, key, attempt, lease: te.encode('{}') });
      out.push({ kind: RecordKind.EFFECT_RELEASED, node: effectNode, key, attempt, reason: new Uint8Array(0) });
    }
  }
  out.push({ kind: RecordKind.EFFECT_ATTEMPT, node: ghost, key: lastKey, attempt: lastAttempt + 1, lease: new Uint8Array(0) });
  out.push({ kind: RecordKind.EFFECT_ATTEMPT, node: te.encode(wf.start), key: lastKey, attempt: lastAttempt + 1, lease: new Uint8Array(0) });
  for (const id of [lastId, te.encode('i-other')]) {
    out.push({ kind: RecordKind.INTERRUPT_PARKED, node: interruptNode, interruptId: id });
    out.push({ kind: RecordKind.RESUME_CLAIMED, interruptId: id, value: te.encode('1') });
  }
  // Reserved ids (`node@seq`, docs/core-api.md "Transitions") that break the rule at seq head + 1:
  // another node's name, the next seq (the park the model writes, node@(head + 1), is a step).
  const next = head + 1;
  const interruptName = wf.nodes.find((n) => n.kind === 'interrupt')?.name ?? 'none';
  const otherName = wf.nodes.find((n) => n.name !== interruptName)?.name ?? 'ghost';
  for (const id of [`${otherName}@${next}`, `${interruptName}@${next + 1}`]) {
    out.push({ kind: RecordKind.INTERRUPT_PARKED, node: interruptNode, interruptId: te.encode(id) });
  }
  for (const sourceSeq of [head, Math.max(head - 1, 0)]) {
    out.push({ kind: RecordKind.FORKED, sourceRunId: te.encode('run-0'), sourceSeq, runId: te.encode('run-x'), intent: new Uint8Array(0) });
  }
  out.push({ kind: RecordKind.RUN_COMPLETED });
  out.push({ kind: RecordKind.RUN_FAILED, node: new Uint8Array(0), code: te.encode('E'), message: new Uint8Array(0) });
  return out;
}


export function enumerateHistories(a: RecoveryCore, b: RecoveryCore, options: EnumerationOptions): EnumerationResult {
  return new Enumerator(a, b, options).run();
}

export function describeEnumeration(r: EnumerationResult): string {
  return `up to ${r.maxRecords} records: ${r.boundaryLogs} logs at record boundaries + ${r.tornLogs} torn logs + ` +
    `${r.wrongExtensionLogs} logs with one wrong record, ` +
    `${r.distinctRecoveries} distinct recovery encodings at boundaries, ${r.distinctPhases} distinct outcomes ` +
    `((status, action) pairs and error codes); ` +
    `${r.recoverCalls} recover + ${r.admitCalls} admit comparisons, ${r.splitChecks} split checks in ${(r.elapsedMs / 1000).toFixed(1)} s`;
}

const CUTS = ['edges', 'all'] as const;
const AGAINST = ['wasm', 'reference'] as const;
/** The largest --max-records: the tree about doubles with each record (bound 12 took 205 s, README.md), so 20 is about a day. */
export const MAX_RECORDS_LIMIT = 20;

export const USAGE = `usage: bash scripts/tsx.sh equivalence/enumerate.ts [options]
  --max-records N   the bound: histories of up to N records, 0 to ${MAX_RECORDS_LIMIT} (9; 0: the empty log only)
  --cuts K          torn cuts inside the last record: ${CUTS.join('|')} (edges: +1, +11, +12, +13, end-1; all: every byte)
  --against A       the core compared with the reference: ${AGAINST.join('|')} (wasm)
  --formats F       the trees, by the format runs start in: 2,1 | 1,2 | 2 | 1 (2,1)
  --no-upgrades     format-1 runs are never upgraded to format 2
  --oracle          also compare with the model extracted from proofs/coq
  --help            this text`;

/** The one usage line printed after a refusal. */
const SYNOPSIS = `usage: bash scripts/tsx.sh equivalence/enumerate.ts [--max-records N] [--cuts ${CUTS.join('|')}] [--against ${AGAINST.join('|')}] [--formats 2,1] [--no-upgrades] [--oracle] [--help]`;

export interface EnumerateCommand {
  maxRecords: number;
  cuts: EnumerationOptions['cuts'];
  against: (typeof AGAINST)[number];
  formats: Array<1 | 2>;
  upgrades: boolean;
  oracle: boolean;
}

/** Parse enumerate.ts's command line (without node and the script); throws UsageError on anything wrong. */
export function parseEnumerateArgs(argv: string[]): EnumerateCommand | 'help' {
  const values = parseStrict(argv, {
    'max-records': { type: 'string' }, cuts: { type: 'string' }, against: { type: 'string' }, formats: { type: 'string' },
    'no-upgrades': { type: 'boolean' }, oracle: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
  });
  if (values['help']) return 'help';
  const maxRecords = intOption(values, 'max-records', { min: 0, max: MAX_RECORDS_LIMIT }, 9, `a whole number from 0 to ${MAX_RECORDS_LIMIT}`);
  const formatsText = typeof values['formats'] === 'string' ? values['formats'] : '2,1';
  const formats = formatsText.split(',').map((f) => f.trim());
  if (!formats.every((f) => f === '1' || f === '2') || new Set(formats).size !== formats.length) {
    throw new UsageError(`--formats wants one of 2,1 | 1,2 | 2 | 1 (the formats runs start in), got "${formatsText}"`);
  }
  return {
    maxRecords,
    cuts: choiceOption(values, 'cuts', CUTS, 'edges'),
    against: choiceOption(values, 'against', AGAINST, 'wasm'),
    formats: formats.map((f) => (f === '1' ? 1 : 2)),
    upgrades: values['no-upgrades'] !== true,
    oracle: values['oracle'] === true,
  };
}

async function main(argv: string[]): Promise<number> {
  let command: EnumerateCommand | 'help';
  try {
    command = parseEnumerateArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`enumerate: ${e.message}\n${SYNOPSIS}`);
    return 2;
  }
  if (command === 'help') {
    console.log(USAGE);
    return 0;
  }
  const { maxRecords, cuts, against, formats, upgrades } = command;
  const a = against === 'reference' ? reference : await loadWasmCore();
  const oracle = command.oracle ? new ModelOracle(loadExtractedModel(), reference.name) : null;
  const result = enumerateHistories(a, reference, { maxRecords, cuts, formats, upgrades, oracle });
  if (oracle) console.log(`oracle: ${oracle.stats.recoverCalls} recover + ${oracle.stats.admitCalls} admit calls to the extracted model, ${oracle.stats.reservedRule} answers set by the reserved-id rule, not sent: ${JSON.stringify([...oracle.stats.unrepresentable])}`);
  console.log(describeEnumeration(result));
  if (result.divergence) {
    const { describeDivergence } = await import('./report.js');
    console.error(describeDivergence(result.divergence));
    return 1;
  }
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(2);
  });
}
