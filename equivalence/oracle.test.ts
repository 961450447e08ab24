/**
 * The three-way comparison: the Wasm core, the TypeScript reference and the functions proved in
 * proofs/coq, extracted and compiled to JavaScript (./oracle.ts). The extracted model is built
 * here when missing or stale (proofs/extract/build.sh); if it cannot be built this file fails.
 * Small scope, as `npm test` affords: the fixtures and the corpus at every prefix and request,
 * the exhaustive enumeration to 4 records, a bounded fuzz; and the canaries that must fail.
 */
import { describe, expect, it } from 'vitest';
import { createReferenceCore, decodeRecovery, encodeLogV2, RecordKind, type LogRecord, type RecoveryCore } from 'remit/core';
import { readdirSync, readFileSync } from 'node:fs';
import { anyLogArb, modelLogArb } from './arbitraries.js';
import { CoreComparison } from './compare.js';
import { loadCoresUnderTest, NO_WASM_HELP } from './cores.js';
import { readCorpus } from './corpus.js';
import { enumerateHistories } from './enumerate.js';
import { FIXTURES_DIR } from './fixtures.js';
import { bridgeLog, loadExtractedModel, ModelOracle } from './oracle.js';
import { defaultSeed, runEquivalence } from './property.js';
import { reservedInterruptId } from './reserved.js';
import { describeDivergence } from './report.js';

const cores = await loadCoresUnderTest();
if (cores.wasm === null && !cores.allowNoWasm) throw new Error(NO_WASM_HELP);
// Without the Wasm core (REMIT_ALLOW_NO_WASM=1, announced by loadCoresUnderTest) the model is
// compared with the reference alone.
const core: RecoveryCore = cores.wasm ?? cores.reference;
const model = loadExtractedModel();
const oracle = () => new ModelOracle(model, cores.reference.name);

const te = new TextEncoder();
const fixtures = readdirSync(FIXTURES_DIR).filter((f) => f.endsWith('.bin')).sort();

describe('the extracted model agrees with both cores', () => {
  it.each(fixtures)('fixture %s: every prefix, cut and request', (name) => {
    const log = new Uint8Array(readFileSync(`${FIXTURES_DIR}${name}`));
    const o = oracle();
    const d = new CoreComparison(core, cores.reference, o).everyPrefix(log, { cuts: 'boundary±' });
    if (d) throw new Error(describeDivergence(d));
    expect(o.stats.recoverCalls).toBeGreaterThan(0);
  });

  it('every corpus entry: every prefix and request', () => {
    const o = oracle();
    for (const entry of readCorpus()) {
      const d = new CoreComparison(core, cores.reference, o).everyPrefix(entry.log, { cuts: 'none' });
      if (d) throw new Error(`${entry.name}: ${entry.note.note}\n${describeDivergence(d)}`);
    }
    console.log(`[oracle] corpus: ${o.stats.recoverCalls} recover + ${o.stats.admitCalls} admit model calls; `
      + `${o.stats.reservedRule} answers set by the reserved-id rule; not sent: ${JSON.stringify([...o.stats.unrepresentable])}`);
    expect(o.stats.admitCalls).toBeGreaterThan(1000);
    // The edge-reserved-* entries park reserved ids at another seq or by another node.
    expect(o.stats.reservedRule).toBeGreaterThan(0);
  });

  it('every history of the small workflow up to 4 records (formats 2 and 1, upgrades, wrong next records)', () => {
    const o = oracle();
    const result = enumerateHistories(core, cores.reference, { maxRecords: 4, cuts: 'edges', oracle: o });
    if (result.divergence) throw new Error(describeDivergence(result.divergence));
    console.log(`[oracle] enumeration to 4 records: ${result.boundaryLogs + result.tornLogs + result.wrongExtensionLogs} logs, `
      + `${o.stats.recoverCalls} recover + ${o.stats.admitCalls} admit model calls`);
    expect(result.outcomes).toEqual(expect.arrayContaining(['1/INVOKE_EFFECT', '1/AWAIT_ATTEMPT', 'error 8', 'error 12']));
  });

  it('a bounded fuzz of model histories and every other generator', () => {
    const o = oracle();
    const seed = defaultSeed();
    for (const [label, cases, numRuns] of [['model histories', modelLogArb(16), 40], ['any log', anyLogArb(16), 40]] as const) {
      const run = runEquivalence(core, cores.reference, cases, { numRuns, seed, compare: { cuts: 'none' }, label: `oracle ${label}`, oracle: o });
      if (run.message) throw new Error(run.message);
    }
    console.log(`[oracle] bounded fuzz: ${o.stats.recoverCalls} recover + ${o.stats.admitCalls} admit model calls, ${o.stats.reservedRule} set by the reserved-id rule`);
    expect(o.stats.recoverCalls).toBeGreaterThan(0);
  });
});

describe('the bridge', () => {
  it('interns names in order of first appearance and maps the format of EFFECT_DONE', () => {
    const e = (s: string) => te.encode(s);
    const records: LogRecord[] = [
      { kind: RecordKind.RUN_STARTED, seq: 0, runId: e('r'), workflow: e('w'), version: e('1'), fingerprint: e('f'), definition: e(''),
        nodes: [{ name: e('a'), kind: 2 }, { name: e('b'), kind: 1 }], startNode: e('a'), state: e('{}') },
      { kind: RecordKind.EFFECT_INTENT, seq: 1, node: e('a'), key: e('k') },
      { kind: RecordKind.EFFECT_ATTEMPT, seq: 2, node: e('a'), key: e('k'), attempt: 1, lease: e('{}') },
      { kind: RecordKind.EFFECT_DONE, seq: 3, node: e('a'), key: e('k'), result: e('{}') },
    ];
    const b = bridgeLog(encodeLogV2(records));
    // RUN_STARTED(run 0, 2 entries: a=0 effect, b=1 pure, start 0, state 0), INTENT(0, key 0),
    // ATTEMPT(0, key 0, 1), fenced DONE (tag 12)(0, key 0, payload 0: "{}" again).
    expect(b.text).toBe('4 1 0 2 0 2 1 1 0 0 3 0 0 10 0 0 1 12 0 0 0');
    // A damaged last byte (in a format-2 record's link): the records before it, then Corrupt(BAD_LINK = 12).
    const log = encodeLogV2(records);
    log[log.length - 1] = log[log.length - 1]! ^ 1;
    expect(bridgeLog(log).text).toBe('4 1 0 2 0 2 1 1 0 0 3 0 0 10 0 0 1 13 12');
  });
});

describe('the reserved-id rule the model lacks (interrupt ids `name@seq`)', () => {
  const e = (x: string) => te.encode(x);
  const started: LogRecord = {
    kind: RecordKind.RUN_STARTED, seq: 0, runId: e('r'), workflow: e('w'), version: e('1'), fingerprint: e(''), definition: e(''),
    nodes: [{ name: e('p'), kind: 1 }, { name: e('i'), kind: 3 }], startNode: e('p'), state: e('{}'),
  };
  const toI: LogRecord = { kind: RecordKind.NODE_COMPLETED, seq: 1, node: e('p'), next: e('i'), stateForm: 0, state: e('{}') };
  const park = (node: string, id: string, seq = 2): LogRecord => ({ kind: RecordKind.INTERRUPT_PARKED, seq, node: e(node), interruptId: e(id) });

  it('reads an id as reserved exactly when it is name@seq (a non-empty name before the last @, 1..10 digits, no leading zero, a u32)', () => {
    const read = (id: string) => {
      const r = reservedInterruptId(e(id));
      return r === null ? null : [new TextDecoder().decode(r.name), r.seq];
    };
    expect(read('i@2')).toEqual(['i', 2]);
    expect(read('i@0')).toEqual(['i', 0]);
    expect(read('a@b@12')).toEqual(['a@b', 12]);
    expect(read('i@4294967295')).toEqual(['i', 0xffff_ffff]);
    for (const id of ['i@05', 'i@00', '@2', 'i@', 'i', 'i@4294967296', 'i@12345678901', 'i@1x', 'i@-1', 'i@ 1', 'i@2@']) expect(read(id), id).toBeNull();
  });

  it('the expected answer: the model\'s where it fails at or before the violating park, DUPLICATE_INTERRUPT there otherwise', () => {
    const cases: Array<[string, LogRecord[], number, number]> = [
      // [what, records, expected error code, at seq]
      ['i parks i@3 at 2 (the model recovers)', [started, toI, park('i', 'i@3')], 10, 2],
      ['i parks p@2 at 2 (the model recovers)', [started, toI, park('i', 'p@2')], 10, 2],
      ['zz (no such node) parks i@2 at 2: UNKNOWN_NODE first, the model\'s', [started, toI, park('zz', 'i@2')], 9, 2],
      ['p (not an interrupt node) parks p@1 at 1: IMPOSSIBLE_ORDER first, the model\'s', [started, park('p', 'p@1', 1)], 8, 1],
      ['i parks x twice (not reserved), then i@9: the model\'s DUPLICATE_INTERRUPT at the first', [started, toI, park('i', 'x'),
        { kind: RecordKind.RESUME_CLAIMED, seq: 3, interruptId: e('x'), value: e('') },
        { kind: RecordKind.NODE_COMPLETED, seq: 4, node: e('i'), next: e('i'), stateForm: 0, state: e('{}') }, park('i', 'x', 5), park('i', 'i@9', 6)], 10, 5],
    ];
    for (const [what, records, code, seq] of cases) {
      const log = encodeLogV2(records);
      const o = oracle();
      const d = new CoreComparison(core, cores.reference, o).everyPrefix(log, { cuts: 'none' });
      if (d) throw new Error(`${what}\n${describeDivergence(d)}`);
      const r = decodeRecovery(cores.reference.recoverEncoded(log));
      expect(r.ok ? null : [r.code, r.seq], what).toEqual([code, seq]);
      const modelAlone = JSON.parse(model.recover(bridgeLog(log).text)) as { ok: boolean; code?: number; seq?: number };
      // Where the model recovers past the park, the rule set the answer (counted); else the model's stood.
      expect(o.stats.reservedRule > 0, what).toBe(modelAlone.ok !== false || modelAlone.seq! > seq);
    }
  });
});

describe('canaries: the three-way comparison fails on an injected bug', () => {
  it('a wrong rule in the TS reference (done-without-attempt) run against itself: only the model disagrees', () => {
    const buggy = createReferenceCore({ canary: 'done-without-attempt' });
    const result = enumerateHistories(buggy, buggy, { maxRecords: 4, cuts: 'edges', oracle: new ModelOracle(model, buggy.name) });
    expect(result.divergence).not.toBeNull();
    expect(result.divergence!.coreNames[0]).toBe('model');
  });

  it('a mutated model input (a fenced EFFECT_DONE sent as a format-1 one) is caught', () => {
    const result = enumerateHistories(cores.reference, cores.reference, {
      maxRecords: 5, cuts: 'edges', oracle: new ModelOracle(model, 'reference', 'done-format-swapped'),
    });
    expect(result.divergence).not.toBeNull();
    expect(result.divergence!.coreNames[0]).toBe('model');
  });
});
