/**
 * fast-check arbitraries: records of every kind, model workflows and histories, mutated logs, raw
 * bytes. Every generated log is a `LogCase`: the logs to compare plus a label saying where they
 * came from (printed with failures).
 */

import fc from 'fast-check';
import { chainOf, frameRecord } from 'remit/core';
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
/**
 * The words of the damage records: WORDS and three reserved interrupt ids (`name@seq`,
 * docs/core-api.md, "Transitions"), which a random record may park at their seq, at another, by
 * another node, or use as a node name or key.
 */
const DAMAGE_WORDS = [...WORDS, 'a@3', 'b@12', 'i@2'];

type Stage = 'at' | 'intent' | 'attempted' | 'released' | 'done' | 'parked' | 'claimed' | 'ended' | 'completed' | 'failed';

/** One damage of a walked log: a vocabulary record put in place of record `at`, before it, or record `at` dropped or doubled. */
interface GrammarDamage {
  how: 'replace' | 'insert' | 'delete' | 'duplicate';
  at: number;
  record: Omit<LogRecord, 'seq'>;
}

const grammarWalkArb = fc.record({
  /** Node kinds (1 pure, 2 effect, 3 interrupt) of the nodes named WORDS[0], WORDS[1], ... */
  kinds: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 4 }),
  start: fc.nat(),
  /** 1, 2, or 0: format 1 upgraded to format 2 before record `upgradeAt`. */
  format: fc.constantFrom(0, 1, 2, 2),
  upgradeAt: fc.nat(),
  choices: fc.array(fc.nat(), { maxLength: 14 }),
  damage: fc.option(
    fc.record({
      how: fc.constantFrom('replace' as const, 'insert' as const, 'delete' as const, 'duplicate' as const),
      at: fc.nat(),
      record: vocabularyRecordArb(DAMAGE_WORDS),
    }),
    { freq: 2 },
  ),
});

/**
 * Walk the protocol (docs/log-format.md, ordering rules) over the vocabulary: from RUN_STARTED,
 * each choice picks one record the rules allow next (a completion routes to a table node or ends
 * the run; an effect in format 2 claims attempt 1, then completes, is released or is taken over;
 * an interrupt parks a fresh id and is claimed), and one choice in 16 forks at a checkpoint or
 * fails the run instead. Keys are vocabulary words, so a damage record often names them;
 * interrupt ids are mostly `node@seq` (walkInterruptId), two parks in 16 break the reserved-id
 * rule on purpose. Written from the documents: it never asks a core what may come next.
 */
function walkGrammar(w: { kinds: number[]; start: number; format: number; upgradeAt: number; choices: number[] }): {
  records: Omit<LogRecord, 'seq'>[]; versions: number[];
} {
  const te = new TextEncoder();
  const names = w.kinds.map((_, i) => WORDS[i]!);
  let node = names[w.start % names.length]!;
  const first = {
    kind: RecordKind.RUN_STARTED, runId: te.encode('r'), workflow: te.encode('w'), version: te.encode('1'),
    fingerprint: new Uint8Array(0), definition: new Uint8Array(0),
    nodes: w.kinds.map((kind, i) => ({ name: te.encode(names[i]!), kind })), startNode: te.encode(node), state: te.encode('{}'),
  } as Omit<LogRecord, 'seq'>;
  const records: Omit<LogRecord, 'seq'>[] = [first];
  let stage: Stage = 'at', key = '', id = '', attempt = 0, runId = 'r', forks = 0;
  const parked: string[] = [];
  const kindOf = (n: string) => w.kinds[names.indexOf(n)]!;
  const formatAt = (i: number) => (w.format === 0 ? (i >= w.upgradeAt % (w.choices.length + 2) ? 2 : 1) : w.format);
  const lastIsCheckpoint = () => {
    const k = records[records.length - 1]!.kind;
    return k === RecordKind.RUN_STARTED || k === RecordKind.NODE_COMPLETED;
  };
  const complete = (c: number): Omit<LogRecord, 'seq'> => {
    // Route to a table node twice as often as ending the run.
    const r = c % (2 * names.length + 1);
    const next = r < 2 * names.length ? names[r % names.length]! : '';
    const record = { kind: RecordKind.NODE_COMPLETED, node: te.encode(node), next: te.encode(next), stateForm: (c >>> 8) % 2, state: te.encode('{}') };
    if (next === '') stage = 'ended';
    else { stage = 'at'; node = next; }
    return record as Omit<LogRecord, 'seq'>;
  };
  for (const c of w.choices) {
    if (stage === 'completed' || stage === 'failed') break;
    const v2 = formatAt(records.length) === 2;
    const rare = c % 16;
    let record: Omit<LogRecord, 'seq'>;
    if (rare === 15 && lastIsCheckpoint()) {
      forks += 1;
      record = { kind: RecordKind.FORKED, sourceRunId: te.encode(runId), sourceSeq: records.length - 1, runId: te.encode(`r${forks}`), intent: te.encode('{}') } as Omit<LogRecord, 'seq'>;
      runId = `r${forks}`;
    } else if (rare === 14) {
      record = { kind: RecordKind.RUN_FAILED, node: te.encode((stage as Stage) === 'ended' ? '' : node), code: te.encode('E'), message: new Uint8Array(0) } as Omit<LogRecord, 'seq'>;
      stage = 'failed';
    } else {
      const pick = c >>> 4;
      switch (stage) {
        case 'at': {
          const kind = kindOf(node);
          if (kind === 1) record = complete(pick);
          else if (kind === 2) {
            key = WORDS[pick % WORDS.length]!;
            attempt = 0;
            stage = 'intent';
            record = { kind: RecordKind.EFFECT_INTENT, node: te.encode(node), key: te.encode(key) } as Omit<LogRecord, 'seq'>;
          } else {
            id = walkInterruptId(node, records.length, pick);
            if (parked.includes(id)) id = `${id}${parked.length}`;
            parked.push(id);
            stage = 'parked';
            record = { kind: RecordKind.INTERRUPT_PARKED, node: te.encode(node), interruptId: te.encode(id) } as Omit<LogRecord, 'seq'>;
          }
          break;
        }
        case 'intent': case 'attempted': case 'released': {
          // Format 1 completes straight after the intent; format 2 needs a live attempt.
          const move = !v2 ? 'done' : stage === 'attempted' ? (['done', 'release', 'attempt'] as const)[pick % 3]! : 'attempt';
          if (move === 'done') {
            stage = 'done';
            record = { kind: RecordKind.EFFECT_DONE, node: te.encode(node), key: te.encode(key), result: te.encode('1') } as Omit<LogRecord, 'seq'>;
          } else if (move === 'release') {
            stage = 'released';
            record = { kind: RecordKind.EFFECT_RELEASED, node: te.encode(node), key: te.encode(key), attempt, reason: new Uint8Array(0) } as Omit<LogRecord, 'seq'>;
          } else {
            attempt += 1;
            stage = 'attempted';
            record = { kind: RecordKind.EFFECT_ATTEMPT, node: te.encode(node), key: te.encode(key), attempt, lease: new Uint8Array(0) } as Omit<LogRecord, 'seq'>;
          }
          break;
        }
        case 'done': case 'claimed': record = complete(pick); break;
        case 'parked':
          stage = 'claimed';
          record = { kind: RecordKind.RESUME_CLAIMED, interruptId: te.encode(id), value: te.encode('1') } as Omit<LogRecord, 'seq'>;
          break;
        default: // ended
          stage = 'completed';
          record = { kind: RecordKind.RUN_COMPLETED } as Omit<LogRecord, 'seq'>;
      }
    }
    records.push(record);
  }
  return { records, versions: records.map((_, i) => formatAt(i)) };
}

/**
 * The id of a park at `seq` by `node`: mostly the reserved id the shell writes (`node@seq`,
 * docs/core-api.md, "Transitions"); else a word (not reserved: the rule of ids never parked
 * twice), an id that only looks reserved (`node@0seq`, a leading zero; `@seq`, no name), or a
 * reserved id that breaks the rule (another seq, another node: DUPLICATE_INTERRUPT there).
 */
function walkInterruptId(node: string, seq: number, pick: number): string {
  const word = WORDS[pick % WORDS.length]!;
  switch (Math.floor(pick / WORDS.length) % 16) {
    case 10: case 11: case 12: return word;
    case 13: return (pick & 1) === 0 ? `${node}@0${seq}` : `@${seq}`;
    case 14: return `${node}@${(pick & 1) === 0 ? seq + 1 : seq - 1}`;
    case 15: return `${word === node ? `${node}${node}` : word}@${seq}`;
    default: return `${node}@${seq}`;
  }
}

function damageGrammar(records: Omit<LogRecord, 'seq'>[], versions: number[], d: GrammarDamage): void {
  const at = d.at % (d.how === 'insert' ? records.length + 1 : records.length);
  const version = versions[Math.min(at, versions.length - 1)]!;
  if (d.how === 'replace') records[at] = d.record;
  else if (d.how === 'insert') { records.splice(at, 0, d.record); versions.splice(at, 0, version); }
  else if (d.how === 'delete') { records.splice(at, 1); versions.splice(at, 1); }
  else { records.splice(at, 0, records[at]!); versions.splice(at, 0, version); }
}

/**
 * A protocol walk over the vocabulary (walkGrammar), correctly framed (seqs, checksums, links) in
 * format 1, format 2, or format 1 upgraded to format 2; half the time, one record is then
 * replaced by a random vocabulary record, or one is inserted, dropped or doubled (seqs renumbered,
 * so the damage reaches the ordering rules). The prefixes before the damage are valid and deep.
 */
export const grammarLogArb: fc.Arbitrary<LogCase> = grammarWalkArb.map((w) => {
  const { records, versions } = walkGrammar(w);
  if (w.damage !== null) damageGrammar(records, versions, w.damage);
  const log = encodeFramed(records.map((r, seq) => ({ ...r, seq }) as LogRecord), versions);
  const format = w.format === 0 ? 'v1-upgraded' : `v${w.format}`;
  return { source: `grammar-${format}${w.damage === null ? '' : `-${w.damage.how}`}`, logs: [log] };
});

// ---------------------------------------------------------------- model workflows and histories

/** `d@7`: a name with an `@`, whose reserved ids (`d@7@seq`) name it by their last `@`. */
const NODE_NAMES = ['a', 'b', 'c', 'd@7', 'e', 'é', 'a\u0000', 'node-with-a-longer-name'];

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
  /** False: only the interrupt ids a valid execution writes (no reserved id naming another node or seq). */
  brokenIds?: boolean;
}

/**
 * Model histories; one park in eight breaks the reserved-id rule (model.ts, `parkIdForm`) unless
 * `validOnly`, for properties of valid executions.
 */
export function historyArb(maxSteps: number, options: { validOnly?: boolean } = {}): fc.Arbitrary<ModelHistory> {
  const choices = fc.array(fc.nat(), { maxLength: maxSteps, size: 'max' });
  if (options.validOnly) return fc.record({ workflow: workflowArb, choices, brokenIds: fc.constant(false) });
  return fc.record({ workflow: workflowArb, choices });
}

export function historyLogs(h: ModelHistory): Uint8Array[] {
  return runChoices(h.workflow, h.choices, { brokenIds: h.brokenIds !== false }).logs();
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

