/**
 * Every sub-check of every checker is shown able to fail. A sub-check is one `f.expect(...)` or
 * `f.fail(...)` call in a checker's source; the checkers' sources are read here and their sub-checks
 * enumerated, and the table below must name each of them at least once (a new sub-check without a
 * row fails the coverage test). Each row starts from a good observation on which the checker
 * holds, makes one small edit, and expects the checker to fail with exactly that sub-check's
 * message (matched against the literal text of the call's message) plus only the sub-checks the
 * same edit cannot help breaking (`also`), each once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CellRun } from '../observations.js';
import type { Outcome, RunView } from '../protocol.js';
import type { SinkLine } from '../sink.js';
import { NODE_PATH } from '../workflow.js';
import { CHECKERS, PROPERTIES, type PropertyId } from './index.js';
import { clone, goodConcurrentRun, goodFaultRun } from './testing.js';
import { goodRaceRun, insertLine, subChecks, type SubCheck } from './testing-subchecks.js';

const HERE = dirname(fileURLToPath(import.meta.url));

/** The checkers' sources: one file per property, named after it. */
const CHECKER_FILES = readdirSync(HERE)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('testing') && f !== 'index.ts' && f !== 'verdict.ts')
  .map((f) => f.replace(/\.ts$/, ''))
  .sort();

const SUB_CHECKS: Record<string, SubCheck[]> = Object.fromEntries(
  CHECKER_FILES.map((file) => [file, subChecks(file, readFileSync(join(HERE, `${file}.ts`), 'utf8'))]),
);

interface Row {
  /** The checker: its property id, which is also its file's name. */
  property: PropertyId;
  /** A fragment of the text of exactly one sub-check call of that checker. */
  site: string;
  /** What the edit breaks. */
  what: string;
  base: () => CellRun;
  edit: (run: CellRun) => void;
  /** What the finding must say (beyond matching the sub-check's message). */
  says: RegExp;
  /** Sub-checks (fragments, as `site`) that this edit necessarily breaks too. */
  also?: string[];
}

const fault = goodFaultRun;
const concurrent = goodConcurrentRun;
const race = goodRaceRun;

const ids = (run: CellRun) => run.scenario.runIds;
const sinkLine = (t: SinkLine['t'], node: string, run: string, key?: string): SinkLine => ({ t, node, run, pid: 9, ...(key === undefined ? {} : { key }) });
const withRecord = (v: RunView | null, hex = 'extra'): RunView => ({ ...v!, records: [...v!.records, { id: String(v!.records.length), hex }] });
const withRewritten = (v: RunView | null, index: number): RunView => ({ ...v!, records: v!.records.map((r, i) => (i === index ? { id: r.id, hex: 'rewritten' } : r)) });
const headOf = (v: RunView | null) => v!.headState as Record<string, unknown>;
type RefusalCode = NonNullable<Outcome['refusal']>['code'];
const refused = (code: RefusalCode, message: string, field?: string): Outcome => ({ outcome: 'refused', refusal: { code, message, ...(field === undefined ? {} : { field }) } });

// Note: clone() is structuredClone, which keeps shared references shared (the good runs reuse one
// view object for several steps), so edits replace objects instead of changing them in place.
const ROWS: Row[] = [
  // consume-once
  {
    property: 'consume-once', site: 'not refused with a distinct error', what: 'a second resume is served', base: fault,
    edit: (r) => { r.steps.resumeDuplicate!.outcome = { outcome: 'completed' }; },
    says: /distinct error: completed$/,
  },
  {
    property: 'consume-once', site: 'not refused with a distinct error', what: 'a second resume is refused, but with a code that is not a distinct one', base: fault,
    edit: (r) => { r.steps.resumeDuplicate!.outcome = refused('CONFLICT', 'another writer'); },
    says: /distinct error: refused \(CONFLICT: another writer\)$/,
  },
  {
    property: 'consume-once', site: 'the second resume was recorded', what: 'a refused second resume wrote a record', base: fault,
    edit: (r) => { r.steps.resumeDuplicate!.after = withRecord(r.steps.resumeDuplicate!.after); },
    says: /recorded: 1 record\(s\) added, 0 changed, 0 removed$/,
  },
  {
    property: 'consume-once', site: 'the second resume executed nodes', what: 'a refused second resume ran a node', base: fault,
    edit: (r) => {
      r.sink.push(sinkLine('pure', 'compute', ids(r).main));
      r.steps.resumeDuplicate!.window = { from: r.sink.length - 1, to: r.sink.length };
    },
    says: /\(1 sink line\(s\)\)$/,
  },
  {
    property: 'consume-once', site: 'concurrent resumers were served', what: 'both concurrent resumers are served', base: concurrent,
    edit: (r) => { r.steps.resumeConcurrent!.outcomes[1] = { outcome: 'completed' }; },
    says: /^2 of 2 concurrent resumers were served/,
    also: ['concurrent resumers were refused'],
  },
  {
    property: 'consume-once', site: 'concurrent resumers were refused', what: 'a losing resumer fails with an error instead of a refusal', base: concurrent,
    edit: (r) => { r.steps.resumeConcurrent!.outcomes[1] = { outcome: 'error', error: { kind: 'store', message: 'lost' } }; },
    says: /^0 of 2 concurrent resumers were refused, expected 1$/,
    also: ['neither served nor refused'],
  },
  {
    property: 'consume-once', site: 'neither served nor refused', what: 'a concurrent resumer gives no answer', base: concurrent,
    edit: (r) => { r.steps.resumeConcurrent!.outcomes[1] = null; },
    says: /neither served nor refused: no answer$/,
    also: ['concurrent resumers were refused'],
  },
  {
    property: 'consume-once', site: 'fired ${fires} times', what: 'the gated effect fires twice for two resumers', base: concurrent,
    edit: (r) => insertLine(r, 9, sinkLine('invoke', 'notify', ids(r).main, 'm:notify:8')),
    says: /^the gated effect notify fired 2 times for 2 resumers \(saturation 1\.00\)$/,
  },
  {
    property: 'consume-once', site: 'resume claims are durable', what: 'two resume claims are durable', base: concurrent,
    edit: (r) => { r.steps.resumeConcurrent!.view = { ...r.steps.resumeConcurrent!.view!, claims: 2 }; },
    says: /^2 resume claims are durable, expected 1$/,
  },

  // effect-exactly-once
  {
    property: 'effect-exactly-once', site: 'distinct key(s), expected exactly 1', what: 'notify applied under a second key', base: fault,
    edit: (r) => insertLine(r, 9, sinkLine('apply', 'notify', ids(r).main, 'm:notify:other')),
    says: /^notify: applied under 2 distinct key\(s\)/,
  },
  {
    property: 'effect-exactly-once', site: 'inside its window', what: 'charge invoked twice before its completion was durable, with no fault in between (the fault came after the completion)', base: fault,
    edit: (r) => insertLine(r, 7, sinkLine('invoke', 'charge', ids(r).main, 'm:charge:2')),
    says: /^charge: handler invoked 2 times with 0 of 1 fault\(s\) inside its window/,
  },
  {
    property: 'effect-exactly-once', site: 'more time(s) after its completion was durable', what: 'charge invoked again after its completion was durable (an earlier fault inside its window allows the count)', base: fault,
    edit: (r) => {
      const durable = r.faults[0]!;
      const before = { ...durable, sinkOffset: 7, events: [{ event: 'fault' as const, point: 'before-commit:EFFECT_DONE@charge', kind: 'sigkill' as const }] };
      before.view = { ...durable.view!, records: durable.view!.records.slice(0, 3), completedNodes: ['compute'], effectsDone: [] };
      r.faults.unshift(before);
      insertLine(r, 8, sinkLine('invoke', 'charge', ids(r).main, 'm:charge:2'));
    },
    says: /^charge: handler invoked 1 more time\(s\) after its completion was durable \(fault at after-commit:EFFECT_DONE@charge\)$/,
  },

  // fork-intent
  {
    property: 'fork-intent', site: 'without a fork, was not refused', what: 'continuing from an older checkpoint is accepted', base: fault,
    edit: (r) => { r.steps.continueFromOlder!.outcome = { outcome: 'parked' }; },
    says: /was not refused: parked$/,
  },
  {
    property: 'fork-intent', site: 'the implicit time travel changed the store', what: 'the refused time travel wrote a record', base: fault,
    edit: (r) => { r.steps.continueFromOlder!.after = withRecord(r.steps.continueFromOlder!.after); },
    says: /changed the store: 1 record\(s\) added/,
  },
  {
    property: 'fork-intent', site: 'the implicit time travel executed nodes', what: 'the refused time travel invoked an effect', base: fault,
    edit: (r) => {
      r.sink.push(sinkLine('invoke', 'charge', ids(r).baseline, 'b:charge:again'));
      r.steps.continueFromOlder!.window = { from: r.sink.length - 1, to: r.sink.length };
    },
    says: /executed nodes: 1 sink line\(s\), effect handlers invoked: charge$/,
  },

  // recovery-determinism
  {
    property: 'recovery-determinism', site: 'could not be recovered twice', what: 'the second recovery gives nothing', base: fault,
    edit: (r) => { r.steps.recoverTwice!.second = null; },
    says: /could not be recovered twice/,
  },
  {
    property: 'recovery-determinism', site: 'recovering twice in one process differs', what: 'recovering twice in one process differs', base: fault,
    edit: (r) => { r.steps.recoverTwice!.second = { ...r.steps.recoverTwice!.first!, nextAction: 'RUN_PURE compute' }; },
    says: /differs in nextAction$/,
  },
  {
    property: 'recovery-determinism', site: 'a second process recovers differently', what: 'a second process recovers differently', base: fault,
    edit: (r) => { r.steps.recoverTwice!.otherProcess = { ...r.steps.recoverTwice!.first!, claims: 2 }; },
    says: /recovers differently, in claims$/,
  },
  {
    property: 'recovery-determinism', site: 'recovery implementations disagree', what: 'the two cores disagree', base: fault,
    edit: (r) => {
      const t = r.steps.recoverTwice!;
      t.first = { ...t.first!, recoveries: { wasm: 'aaaa', reference: 'bbbb' } };
      t.second = t.first;
      t.otherProcess = null;
      t.otherProcessReason = 'single process';
    },
    says: /disagree: wasm=aaaa, reference=bbbb$/,
  },
  {
    property: 'recovery-determinism', site: 'recovery failed after the fault', what: 'recovery after the fault finds the log invalid', base: fault,
    edit: (r) => { r.faults[0]!.view = { ...r.faults[0]!.view!, status: 'invalid', integrity: { ok: false, record: '3', message: 'checksum mismatch' } }; },
    says: /^recovery failed after the fault in step start: checksum mismatch$/,
  },

  // prefix-continuation
  {
    property: 'prefix-continuation', site: 'the uninterrupted baseline run did not end', what: 'the baseline ends in another state', base: fault,
    edit: (r) => {
      const b = r.steps.baseline!;
      b.final = { outcome: 'completed', state: { ...(b.final!.state as object), amountCents: 1 } };
    },
    says: /expected state: completed, state \{"amountCents":1,/,
  },
  {
    property: 'prefix-continuation', site: 'the main run could not be read', what: 'the main run cannot be read', base: fault,
    edit: (r) => { r.mainView = null; },
    says: /could not be read after its steps/,
  },
  {
    property: 'prefix-continuation', site: 'not completed (next action', what: 'the main run ends parked', base: fault,
    edit: (r) => { r.mainView = { ...r.mainView!, status: 'parked', nextAction: 'PARK approval' }; },
    says: /^the main run ended parked, not completed \(next action PARK approval\)$/,
  },
  {
    property: 'prefix-continuation', site: 'holds no decision', what: 'after concurrent resumers, the run holds no decision', base: concurrent,
    edit: (r) => { r.mainView = { ...r.mainView!, headState: { ...headOf(r.mainView), decision: null } }; },
    says: /no resume value was applied/,
  },
  {
    property: 'prefix-continuation', site: "differs from the uninterrupted run's", what: 'a wrong final state', base: fault,
    edit: (r) => { r.mainView = { ...r.mainView!, headState: { ...headOf(r.mainView), refundCents: (headOf(r.mainView).refundCents as number) + 1 } }; },
    says: /^final state .* differs from/,
  },
  {
    property: 'prefix-continuation', site: 'expected each of', what: 'notify completed twice', base: fault,
    edit: (r) => { r.mainView = { ...r.mainView!, completedNodes: [...NODE_PATH, 'notify'] }; },
    says: /"notify","notify"\], expected each of/,
  },
  {
    property: 'prefix-continuation', site: 'the run could not be read', what: 'the run cannot be read after the fault', base: fault,
    edit: (r) => { r.faults[0]!.view = null; },
    says: /^after the fault at after-commit:EFFECT_DONE@charge the run could not be read$/,
  },
  {
    property: 'prefix-continuation', site: 'are not a prefix of the final', what: 'the nodes durable at the fault are not a prefix of the final ones', base: fault,
    edit: (r) => { r.faults[0]!.view = { ...r.faults[0]!.view!, completedNodes: ['charge', 'compute'] }; },
    says: /\(\["charge","compute"\]\) are not a prefix/,
  },
  {
    property: 'prefix-continuation', site: 'records durable at the fault', what: 'a record durable at the fault is rewritten', base: fault,
    edit: (r) => { r.mainView = withRewritten(r.mainView, 2); },
    says: /lost or rewritten: 0 missing, 1 changed$/,
  },
  {
    property: 'prefix-continuation', site: 'after its completion was durable at the fault', what: 'compute, durable at the fault, runs again', base: fault,
    edit: (r) => insertLine(r, 8, sinkLine('pure', 'compute', ids(r).main)),
    says: /^node compute ran again \(pure\) after its completion was durable/,
  },
  {
    property: 'prefix-continuation', site: 'never ran in the main run', what: 'compute never runs in the main run', base: fault,
    edit: (r) => { r.sink[5] = { ...r.sink[5]!, run: 'another-run' }; },
    says: /never ran/,
  },
  {
    property: 'prefix-continuation', site: 'times with ${faults.length} fault(s)', what: 'compute runs three times with one fault (before it, so not a re-run after durability)', base: fault,
    edit: (r) => {
      insertLine(r, 6, sinkLine('pure', 'compute', ids(r).main));
      insertLine(r, 6, sinkLine('pure', 'compute', ids(r).main));
    },
    says: /^the pure node compute ran 3 times with 1 fault\(s\)$/,
  },
  {
    property: 'prefix-continuation', site: 'continued the crashed run, expected at least 1', what: 'every recoverer is refused with a conflict: none continued the run', base: race,
    edit: (r) => { r.steps.recoverConcurrent!.outcomes[0] = refused('CONFLICT', 'another sequencer appended first'); },
    says: /^0 of 2 concurrent recoverers \(hosts: remit-h1, remit-h2\) continued the crashed run/,
  },
  {
    property: 'prefix-continuation', site: 'nor were refused with a typed conflict', what: 'a recoverer is refused without the typed conflict', base: race,
    edit: (r) => { r.steps.recoverConcurrent!.outcomes[1] = refused('OTHER', 'some error'); },
    says: /^1 of 2 concurrent recoverers neither .*refused \(OTHER: some error\)$/,
  },
  {
    property: 'prefix-continuation', site: 'before the recoverers ran', what: 'the race rewrote a durable record', base: race,
    edit: (r) => { r.steps.recoverConcurrent!.after = withRewritten(r.steps.recoverConcurrent!.after, 2); },
    says: /0 missing, 1 changed$/,
  },

  // fork-determinism
  {
    property: 'fork-determinism', site: 'could not be read around the forks', what: 'the source cannot be read after the forks', base: fault,
    edit: (r) => { r.steps.forkTwice!.sourceAfter = null; },
    says: /could not be read around the forks/,
  },
  {
    property: 'fork-determinism', site: 'not byte-identical', what: 'the source changed', base: fault,
    edit: (r) => { r.steps.forkTwice!.sourceAfter = withRecord(r.steps.forkTwice!.sourceAfter); },
    says: /1 record\(s\) added/,
  },
  {
    property: 'fork-determinism', site: 'was not created', what: 'the second fork is not created', base: fault,
    edit: (r) => { r.steps.forkTwice!.forks[1]!.runId = null; },
    says: /^fork 2 was not created$/,
  },
  {
    property: 'fork-determinism', site: 'did not complete', what: 'the first fork parks', base: fault,
    edit: (r) => { r.steps.forkTwice!.forks[0]!.final = { outcome: 'parked' }; },
    says: /^fork 1 did not complete: parked$/,
  },
  {
    property: 'fork-determinism', site: '${label} ended in', what: 'the first fork ends in another state', base: fault,
    edit: (r) => {
      const fork = r.steps.forkTwice!.forks[0]!;
      fork.view = { ...fork.view!, headState: { ...headOf(fork.view), notificationId: 'other' } };
    },
    says: /^fork 1 ended in .*"notificationId":"other"/,
  },
  {
    property: 'fork-determinism', site: 'before the fork point', what: 'a fork re-runs charge', base: fault,
    edit: (r) => { r.sink[10] = { ...r.sink[10]!, node: 'charge' }; },
    says: /^fork 1: charge \(before the fork point\) ran again 1 time/,
  },
  {
    property: 'fork-determinism', site: 'expected 1 new effect', what: 'a fork applies notify under two keys', base: fault,
    edit: (r) => insertLine(r, 11, sinkLine('apply', 'notify', ids(r).forks[0], 'fa:notify:second')),
    says: /^fork 1: notify applied under 2 key\(s\)/,
  },
  {
    property: 'fork-determinism', site: "reused the source run's idempotency key", what: "a fork reuses the source's notify key", base: fault,
    edit: (r) => {
      r.sink[10] = { ...r.sink[10]!, key: 'm:notify:8' };
      r.sink[11] = { ...r.sink[11]!, key: 'm:notify:8' };
    },
    says: /^fork 1: notify reused/,
  },
  {
    property: 'fork-determinism', site: 'the two forks share a notify idempotency key', what: 'the two forks apply notify under one key', base: fault,
    edit: (r) => {
      r.sink[12] = { ...r.sink[12]!, key: 'fa:notify:9' };
      r.sink[13] = { ...r.sink[13]!, key: 'fa:notify:9' };
    },
    says: /share a notify idempotency key/,
  },
  {
    property: 'fork-determinism', site: "logs differ apart from ids", what: "the two forks' logs differ", base: fault,
    edit: (r) => {
      const fork = r.steps.forkTwice!.forks[1]!;
      fork.view = { ...fork.view!, normalized: [{ kind: 'FORKED', runId: 'something else' }] };
    },
    says: /1 vs 1 records, first difference at record 0$/,
  },

  // liveness
  {
    property: 'liveness', site: '${incident.what} in step', what: 'a command timed out', base: fault,
    edit: (r) => { r.incidents.push({ step: 'resume', what: 'timeout', detail: 'resume did not answer' }); },
    says: /^timeout in step resume: resume did not answer$/,
  },
  {
    property: 'liveness', site: 'recovery gave no answer', what: 'recovery after the fault gives no answer', base: fault,
    edit: (r) => { r.faults[0]!.view = null; },
    says: /^after the fault at after-commit:EFFECT_DONE@charge, recovery gave no answer$/,
  },
  {
    property: 'liveness', site: 'recovery named no next action', what: 'recovery after the fault is stuck', base: fault,
    edit: (r) => { r.faults[0]!.view = { ...r.faults[0]!.view!, nextAction: 'STUCK' }; },
    says: /named no next action \(running\)$/,
  },
  {
    property: 'liveness', site: 'recovery named no next action', what: 'recovery after the fault finds the log invalid', base: fault,
    edit: (r) => { r.faults[0]!.view = { ...r.faults[0]!.view!, status: 'invalid' }; },
    says: /named no next action \(invalid\)$/,
  },
  {
    property: 'liveness', site: 'did not reach completion', what: 'the main run stays parked', base: fault,
    edit: (r) => { r.mainView = { ...r.mainView!, status: 'parked', nextAction: 'PARK approval' }; },
    says: /did not reach completion: parked \(PARK approval\)$/,
  },
  {
    property: 'liveness', site: 'a claimed resume value was not the one', what: 'the run continues with another value than the one claimed before the crash', base: fault,
    edit: (r) => {
      r.faults[0]!.view = { ...r.faults[0]!.view!, claims: 1, status: 'parked' };
      const decision = headOf(r.mainView).decision as { approved: boolean; note: string };
      r.mainView = { ...r.mainView!, headState: { ...headOf(r.mainView), decision: { ...decision, approved: !decision.approved } } };
    },
    says: /claimed resume value/,
  },
  {
    property: 'liveness', site: 'the definition-change probe gave no answer', what: 'the definition-change probe gives no answer', base: fault,
    edit: (r) => { r.steps.probeDefinitionChange = null; },
    says: /probe gave no answer/,
  },
  {
    property: 'liveness', site: 'continued under a changed one', what: 'a changed definition is replayed', base: fault,
    edit: (r) => { r.steps.probeDefinitionChange!.outcome = { outcome: 'completed' }; },
    says: /\(renamed notify\) instead of being refused: completed$/,
  },
  {
    property: 'liveness', site: 'continued under a changed one', what: 'a changed definition is refused, but not as a definition mismatch', base: fault,
    edit: (r) => { r.steps.probeDefinitionChange!.outcome = refused('CONFLICT', 'node notify: conflict'); },
    says: /instead of being refused: refused \(CONFLICT: /,
  },
  {
    property: 'liveness', site: 'does not name the mismatch', what: 'the definition-mismatch refusal does not name the changed node', base: fault,
    edit: (r) => { r.steps.probeDefinitionChange!.outcome = refused('DEFINITION_MISMATCH', 'the workflow definition changed'); },
    says: /\(node notify\)$/,
  },

  // checkpoint-validity
  {
    property: 'checkpoint-validity', site: 'failed its integrity check', what: "the main run's store fails its integrity check", base: fault,
    edit: (r) => { r.mainView = { ...r.mainView!, integrity: { ok: false, record: '3', message: 'crc mismatch' } }; },
    says: /^main run: the store failed its integrity check at 3: crc mismatch$/,
  },
  {
    property: 'checkpoint-validity', site: 'violates the schema', what: 'a stored state of the main run violates the schema', base: fault,
    edit: (r) => { r.mainView = { ...r.mainView!, states: [...r.mainView!.states, { ...headOf(r.mainView), refundCents: -1 }] }; },
    says: /^main run: stored state #2 violates the schema at refundCents/,
  },
  {
    property: 'checkpoint-validity', site: 'the side run did not park', what: 'the invalid-resume side run does not park', base: fault,
    edit: (r) => { r.steps.probeInvalidResume!.parked = { outcome: 'completed' }; },
    says: /did not park: completed$/,
  },
  {
    property: 'checkpoint-validity', site: 'invalid resume value was not rejected', what: 'an invalid resume value is refused, but not as invalid', base: fault,
    edit: (r) => { r.steps.probeInvalidResume!.invalid = refused('CONFLICT', 'approved: busy', 'approved'); },
    says: /not rejected: refused \(CONFLICT: /,
  },
  {
    property: 'checkpoint-validity', site: 'does not name the field "approved"', what: 'the rejection of an invalid resume value names no field', base: fault,
    edit: (r) => { r.steps.probeInvalidResume!.invalid = refused('INVALID_VALUE', 'bad value'); },
    says: /"approved"/,
  },
  {
    property: 'checkpoint-validity', site: 'reached the store before validation', what: 'a rejected invalid resume value wrote a record', base: fault,
    edit: (r) => { r.steps.probeInvalidResume!.after = withRecord(r.steps.probeInvalidResume!.after); },
    says: /before validation: 1 record\(s\) added/,
  },
  {
    property: 'checkpoint-validity', site: 'the valid one was not applied', what: 'after an invalid resume value, the valid one is refused', base: fault,
    edit: (r) => { r.steps.probeInvalidResume!.valid.final = refused('ALREADY_CONSUMED', 'consumed'); },
    says: /not applied .*: refused \(ALREADY_CONSUMED: consumed\)$/,
  },
  {
    property: 'checkpoint-validity', site: 'the valid one was not applied', what: 'after an invalid resume value, the run completes with another decision', base: fault,
    edit: (r) => {
      const v = r.scenario.resumeValue;
      r.steps.probeInvalidResume!.valid.final = { outcome: 'completed', state: { decision: { ...v, approved: !v.approved } } };
    },
    says: /not applied .*: completed$/,
  },
  {
    property: 'checkpoint-validity', site: 'did not fail with a validation error', what: 'an invalid state fails as a store error', base: fault,
    edit: (r) => { r.steps.probeInvalidState!.outcome = { outcome: 'error', error: { kind: 'store', message: 'refundCents rejected by a constraint', field: 'refundCents' } }; },
    says: /validation error: error \(store: /,
  },
  {
    property: 'checkpoint-validity', site: 'does not name the field "refundCents"', what: 'the validation error for an invalid state names no field', base: fault,
    edit: (r) => { r.steps.probeInvalidState!.outcome = { outcome: 'error', error: { kind: 'validation', message: 'invalid state' } }; },
    says: /"refundCents"/,
  },
  {
    property: 'checkpoint-validity', site: 'not the last valid state', what: 'after the invalid state, the head is another state', base: fault,
    edit: (r) => {
      const is = r.steps.probeInvalidState!;
      is.view = { ...is.view!, headState: { ...headOf(is.view), refundCents: 0 } };
    },
    says: /head is .*"refundCents":0/,
  },
  {
    property: 'checkpoint-validity', site: 'recorded as completed', what: 'the failing node is recorded as completed', base: fault,
    edit: (r) => {
      const is = r.steps.probeInvalidState!;
      is.view = { ...is.view!, completedNodes: ['compute'] };
    },
    says: /completed: \["compute"\]$/,
  },
  {
    property: 'checkpoint-validity', site: 'the corruption probe gave no answer', what: 'the corruption probe gives no answer', base: fault,
    edit: (r) => { r.steps.probeCorruption = null; },
    says: /gave no answer/,
  },
  {
    property: 'checkpoint-validity', site: 'was loaded silently', what: 'a corrupted record is loaded silently', base: fault,
    edit: (r) => { r.steps.probeCorruption = { ...r.steps.probeCorruption!, detected: false }; },
    says: /a corrupted record \(3\) was loaded silently/,
  },
  {
    property: 'checkpoint-validity', site: 'the corruption error does not name', what: 'the corruption error names another record', base: fault,
    edit: (r) => { r.steps.probeCorruption = { ...r.steps.probeCorruption!, reportedRecord: '7' }; },
    says: /does not name the record: /,
  },
  {
    property: 'checkpoint-validity', site: 'the corruption error does not name', what: 'the corruption error names another run', base: fault,
    edit: (r) => { r.steps.probeCorruption = { ...r.steps.probeCorruption!, reportedRunId: 'another-run' }; },
    says: /does not name the run: /,
  },
  {
    property: 'checkpoint-validity', site: 'the corruption error does not name', what: 'the corruption error names neither', base: fault,
    edit: (r) => { r.steps.probeCorruption = { ...r.steps.probeCorruption!, reportedRunId: null, reportedRecord: null }; },
    says: /does not name the run and the record: /,
  },
];

function verdictOf(run: CellRun, property: PropertyId) {
  return (CHECKERS.find((c) => c.property === property) as (typeof CHECKERS)[number]).check(run);
}

/** The one sub-check of `property` whose call text contains `fragment`. */
function siteOf(property: PropertyId, fragment: string): SubCheck {
  const found = (SUB_CHECKS[property] ?? []).filter((s) => s.text.includes(fragment));
  if (found.length !== 1) throw new Error(`${property}: ${found.length} sub-checks contain ${JSON.stringify(fragment)}, expected 1`);
  return found[0]!;
}

describe('the sub-check table covers every sub-check', () => {
  it('reads one checker source per property, each with sub-checks', () => {
    expect(CHECKER_FILES).toEqual([...PROPERTIES].sort());
    for (const file of CHECKER_FILES) expect(SUB_CHECKS[file]!.length, file).toBeGreaterThan(0);
  });

  it('each row names exactly one sub-check, and every sub-check has a row', () => {
    const covered = new Set<SubCheck>();
    for (const row of ROWS) {
      covered.add(siteOf(row.property, row.site));
      for (const a of row.also ?? []) siteOf(row.property, a);
    }
    const missing = CHECKER_FILES.flatMap((f) => SUB_CHECKS[f]!).filter((s) => !covered.has(s));
    expect(missing.map((s) => `${s.file}.ts:${s.line} ${s.text.slice(0, 120)}`)).toEqual([]);
    expect(covered.size).toBe(CHECKER_FILES.reduce((n, f) => n + SUB_CHECKS[f]!.length, 0));
  });
});

describe('every sub-check is shown able to fail: one edit of a good observation per row', () => {
  it.each(ROWS.map((row) => [`${row.property}: ${row.what}`, row] as const))('%s', (_, row) => {
    const site = siteOf(row.property, row.site);
    const also = (row.also ?? []).map((a) => siteOf(row.property, a));
    const good = clone(row.base());
    expect(verdictOf(good, row.property).status, 'the unedited observation').toBe('holds');

    const run = clone(row.base());
    row.edit(run);
    const v = verdictOf(run, row.property);
    expect(v.status, JSON.stringify(v)).toBe('violated');
    if (v.status !== 'violated') return;
    // Exactly one finding from the row's sub-check, saying what it must; the rest, one from each `also`.
    const own = v.evidence.filter((e) => site.message.test(e));
    expect(own, `findings of ${site.file}.ts:${site.line} in ${JSON.stringify(v.evidence)}`).toHaveLength(1);
    expect(own[0]).toMatch(row.says);
    const rest = v.evidence.filter((e) => !site.message.test(e));
    expect(rest, `other findings in ${JSON.stringify(v.evidence)}`).toHaveLength(also.length);
    for (const a of also) expect(rest.filter((e) => a.message.test(e)), `${a.file}.ts:${a.line} in ${JSON.stringify(rest)}`).toHaveLength(1);
  });
});
