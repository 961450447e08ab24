/**
 * fast-check arbitraries: records of every kind, model workflows and histories, mutated logs, raw
 * bytes. Every generated log is a `LogCase`: the logs to compare plus a label saying where they
 * came from (printed with failures).
 */

import fc from 'fast-check';
import { chainOf, encodeLog, encodeLogV2, frameRecord } from 'remit/core';
import { RecordKind, type LogRecord, type NodeEntry } from 'remit/core';
import { encodeFramed, runChoices, type ModelNode, type ModelWorkflow } from './model.js';
import { applyMutation, mutationArb, type Mutation } from './mutations.js';

export interface LogCase {
  source: string;
  logs: Uint8Array[];
}

// ---------------------------------------------------------------- records of every kind

const u32Arb = fc.integer({ min: 0, max: 0xffff_ffff });
const smallBytesArb = fc.uint8Array({ maxLength: 48 });
/** A valid `name`: 1..1024 bytes, usually short. */
export const nameArb = fc.oneof(
  { weight: 8, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 1000, maxLength: 1024 }) },
);
const nodeEntryArb: fc.Arbitrary<NodeEntry> = fc.record({ name: nameArb, kind: fc.integer({ min: 0, max: 255 }) });

const recordBodyArbs = {
  [RecordKind.RUN_STARTED]: fc.record({
    kind: fc.constant(RecordKind.RUN_STARTED), runId: nameArb, workflow: nameArb, version: smallBytesArb,
    fingerprint: smallBytesArb, definition: smallBytesArb, nodes: fc.array(nodeEntryArb, { maxLength: 6 }),
    startNode: nameArb, state: smallBytesArb,
  }),
  [RecordKind.NODE_COMPLETED]: fc.record({
    kind: fc.constant(RecordKind.NODE_COMPLETED), node: nameArb, next: smallBytesArb,
    stateForm: fc.constantFrom(0, 1), state: smallBytesArb,
  }),
  [RecordKind.EFFECT_INTENT]: fc.record({ kind: fc.constant(RecordKind.EFFECT_INTENT), node: nameArb, key: nameArb }),
  [RecordKind.EFFECT_DONE]: fc.record({ kind: fc.constant(RecordKind.EFFECT_DONE), node: nameArb, key: nameArb, result: smallBytesArb }),
  [RecordKind.INTERRUPT_PARKED]: fc.record({ kind: fc.constant(RecordKind.INTERRUPT_PARKED), node: nameArb, interruptId: nameArb }),
  [RecordKind.RESUME_CLAIMED]: fc.record({ kind: fc.constant(RecordKind.RESUME_CLAIMED), interruptId: nameArb, value: smallBytesArb }),
  [RecordKind.FORKED]: fc.record({
    kind: fc.constant(RecordKind.FORKED), sourceRunId: nameArb, sourceSeq: u32Arb, runId: nameArb, intent: smallBytesArb,
  }),
  [RecordKind.RUN_COMPLETED]: fc.record({ kind: fc.constant(RecordKind.RUN_COMPLETED) }),
  [RecordKind.RUN_FAILED]: fc.record({ kind: fc.constant(RecordKind.RUN_FAILED), node: smallBytesArb, code: smallBytesArb, message: smallBytesArb }),
  [RecordKind.EFFECT_ATTEMPT]: fc.record({
    kind: fc.constant(RecordKind.EFFECT_ATTEMPT), node: nameArb, key: nameArb, attempt: u32Arb, lease: smallBytesArb,
  }),
  [RecordKind.EFFECT_RELEASED]: fc.record({
    kind: fc.constant(RecordKind.EFFECT_RELEASED), node: nameArb, key: nameArb, attempt: u32Arb, reason: smallBytesArb,
  }),
};

/** Any record that the codec accepts (names valid, state_form 0/1), of any kind, any seq. */
export const recordArb: fc.Arbitrary<LogRecord> = fc
  .tuple(fc.oneof(...Object.values(recordBodyArbs)), u32Arb)
  .map(([body, seq]) => ({ ...body, seq }) as LogRecord);

// ---------------------------------------------------------------- records over a small vocabulary

/**
 * Records whose names come from a few words, so a random sequence often passes parsing and the
 * node-table lookups, and exercises the ordering rules rather than dying at the first name.
 */
function vocabularyRecordArb(words: string[]): fc.Arbitrary<Omit<LogRecord, 'seq'>> {
  const te = new TextEncoder();
  const word = fc.constantFrom(...words).map((w) => te.encode(w));
  const maybeEmpty = fc.oneof({ weight: 4, arbitrary: word }, { weight: 1, arbitrary: fc.constant(new Uint8Array(0)) });
  const small = fc.constantFrom(te.encode('{}'), te.encode('1'), new Uint8Array(0));
  return fc.oneof(
    { weight: 1, arbitrary: fc.record({
      kind: fc.constant(RecordKind.RUN_STARTED), runId: word, workflow: word, version: small, fingerprint: small,
      definition: small, nodes: fc.array(fc.record({ name: word, kind: fc.integer({ min: 0, max: 4 }) }), { minLength: 0, maxLength: 4 }),
      startNode: word, state: small,
    }) },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant(RecordKind.NODE_COMPLETED), node: word, next: maybeEmpty, stateForm: fc.constantFrom(0, 1), state: small }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant(RecordKind.EFFECT_INTENT), node: word, key: word }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant(RecordKind.EFFECT_DONE), node: word, key: word, result: small }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant(RecordKind.INTERRUPT_PARKED), node: word, interruptId: word }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant(RecordKind.RESUME_CLAIMED), interruptId: word, value: small }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant(RecordKind.FORKED), sourceRunId: word, sourceSeq: fc.integer({ min: 0, max: 8 }), runId: word, intent: small }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant(RecordKind.RUN_COMPLETED) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant(RecordKind.RUN_FAILED), node: maybeEmpty, code: small, message: small }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant(RecordKind.EFFECT_ATTEMPT), node: word, key: word, attempt: fc.integer({ min: 0, max: 3 }), lease: small }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant(RecordKind.EFFECT_RELEASED), node: word, key: word, attempt: fc.integer({ min: 0, max: 3 }), reason: small }) },
  ) as fc.Arbitrary<Omit<LogRecord, 'seq'>>;
}

const WORDS = ['a', 'b', 'c', 'i', 'k'];
const grammarStartArb = fc.record({
  kinds: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 4 }),
  start: fc.constantFrom(...WORDS),
});

/**
 * A RUN_STARTED over the vocabulary followed by vocabulary records, with correct seqs and CRCs, in
 * format 2 (links chained) or format 1 (kinds 10 and 11 are then BAD_KIND).
 */
export const grammarLogArb: fc.Arbitrary<LogCase> = fc
  .tuple(grammarStartArb, fc.array(vocabularyRecordArb(WORDS), { maxLength: 14 }), fc.constantFrom(1, 2, 2))
  .map(([head, rest, format]) => {
    const te = new TextEncoder();
    const first: Omit<LogRecord, 'seq'> = {
      kind: RecordKind.RUN_STARTED, runId: te.encode('r'), workflow: te.encode('w'), version: te.encode('1'),
      fingerprint: new Uint8Array(0), definition: new Uint8Array(0),
      nodes: head.kinds.map((kind, i) => ({ name: te.encode(WORDS[i]!), kind })), startNode: te.encode(head.start),
      state: te.encode('{}'),
    } as Omit<LogRecord, 'seq'>;
    const records = [first, ...rest].map((r, seq) => ({ ...r, seq }) as LogRecord);
    return { source: `grammar-v${format}`, logs: [format === 2 ? encodeLogV2(records) : encodeLog(records)] };
  });

// ---------------------------------------------------------------- model workflows and histories

const NODE_NAMES = ['a', 'b', 'c', 'd', 'e', 'é', 'a\u0000', 'node-with-a-longer-name'];

export const workflowArb: fc.Arbitrary<ModelWorkflow> = fc
  .integer({ min: 1, max: 5 })
  .chain((count) => {
    const names = NODE_NAMES.slice(0, count);
    const route = fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 5, arbitrary: fc.constantFrom(...names) });
    const nodeArb = (name: string): fc.Arbitrary<ModelNode> => fc.record({
      name: fc.constant(name),
      kind: fc.constantFrom('pure' as const, 'effect' as const, 'interrupt' as const),
      routes: fc.array(route, { minLength: 1, maxLength: 3 }),
    });
    return fc.record({
      name: fc.constantFrom('wf', 'orders'),
      version: fc.constantFrom('1', '2.0'),
      nodes: fc.tuple(...names.map(nodeArb)),
      start: fc.constantFrom(...names),
      keyScheme: fc.constantFrom('per-visit' as const, 'per-node' as const),
      statePadBytes: fc.integer({ min: 0, max: 150 }),
      // Format 2 twice as often; a format-1 run may be upgraded part way (runChoices).
      startFormat: fc.constantFrom(1 as const, 2 as const, 2 as const),
    });
  });

export interface ModelHistory {
  workflow: ModelWorkflow;
  choices: number[];
}

export function historyArb(maxSteps: number): fc.Arbitrary<ModelHistory> {
  return fc.record({ workflow: workflowArb, choices: fc.array(fc.nat(), { maxLength: maxSteps, size: 'max' }) });
}

export function historyLogs(h: ModelHistory): Uint8Array[] {
  return runChoices(h.workflow, h.choices).logs();
}

export function modelLogArb(maxSteps: number): fc.Arbitrary<LogCase> {
  return historyArb(maxSteps).map((h) => ({ source: 'model', logs: historyLogs(h) }));
}

// ---------------------------------------------------------------- mutated and raw logs

/** A model log (the last one of its history) damaged by one to three mutations. */
export function mutatedLogArb(maxSteps: number): fc.Arbitrary<LogCase> {
  return fc
    .tuple(historyArb(maxSteps), fc.array(mutationArb, { minLength: 1, maxLength: 3 }), grammarLogArb)
    .map(([h, mutations, donor]) => {
      const logs = historyLogs(h);
      let log = logs[logs.length - 1]!;
      const donorLog = donor.logs[0]!;
      for (const m of mutations) log = applyMutation(log, m, donorLog);
      return { source: `mutated(${mutations.map(describeMutation).join(',')})`, logs: [log] };
    });
}

function describeMutation(m: Mutation): string {
  return m.type;
}

/** Raw random bytes, sometimes behind a valid first record so the damage is not always at seq 0. */
export const rawBytesArb: fc.Arbitrary<LogCase> = fc
  .tuple(fc.boolean(), fc.uint8Array({ maxLength: 96 }))
  .map(([afterValidRecord, junk]) => {
    if (!afterValidRecord) return { source: 'raw', logs: [junk] };
    const ex = runChoices(SMALL_FOR_RAW, []);
    const first = encodeFramed(ex.records, ex.versions);
    const log = new Uint8Array(first.length + junk.length);
    log.set(first);
    log.set(junk, first.length);
    return { source: 'raw-after-record', logs: [log] };
  });

const SMALL_FOR_RAW: ModelWorkflow = {
  name: 'w', version: '1', nodes: [{ name: 'a', kind: 'pure', routes: [null] }], start: 'a', keyScheme: 'per-visit', statePadBytes: 0,
};

/**
 * Correctly framed records (seq, CRC, link) around random payloads of a random kind and format:
 * payload parsing, and the kinds each format allows.
 */
export const framedJunkArb: fc.Arbitrary<LogCase> = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.uint8Array({ maxLength: 40 }), fc.constantFrom(1, 2)), { minLength: 1, maxLength: 4 }))
  .map(([afterValidRecord, parts]) => {
    const ex = runChoices(SMALL_FOR_RAW, []);
    const prefix = afterValidRecord ? [encodeFramed(ex.records, ex.versions)] : [];
    let chain = prefix.length ? chainOf(prefix[0]!) : 0;
    const framed = parts.map(([kind, payload, version], i) => {
      const bytes = frameRecord(i + prefix.length, kind, payload, version, chain);
      chain = chainOf(bytes);
      return bytes;
    });
    const all = [...prefix, ...framed];
    const log = new Uint8Array(all.reduce((n, p) => n + p.length, 0));
    let pos = 0;
    for (const p of all) {
      log.set(p, pos);
      pos += p.length;
    }
    return { source: 'framed-junk', logs: [log] };
  });

/** The mix used by the campaign: mostly model histories, then damaged and random logs. */
export function anyLogArb(maxSteps: number): fc.Arbitrary<LogCase> {
  return fc.oneof(
    { weight: 5, arbitrary: modelLogArb(maxSteps) },
    { weight: 3, arbitrary: mutatedLogArb(maxSteps) },
    { weight: 2, arbitrary: grammarLogArb },
    { weight: 1, arbitrary: rawBytesArb },
    { weight: 1, arbitrary: framedJunkArb },
  );
}

