/**
 * Scenario tests of the sequencer and the Remit API on the memory store with the reference core (one
 * on SQLite): one test per rule of docs/guide.md ("Crash and resume semantics", "Errors").
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sinkDeps } from '../../../examples/refund/deps.js';
import { createRefundWorkflow, RefundState } from '../../../examples/refund/workflow.js';
import { createCore } from '../core/index.js';
import { MemoryEffectSink } from '../testing/effect-sink.js';
import {
  AlreadyConsumedError, BeyondHeadError, ConflictError, DefinitionMismatchError, ForkTargetExistsError, HandlerThrewError,
  ImplicitForkError, LogCorruptError, NotACheckpointError, NotJsonError, NotParkedError, ResumeValueInvalidError,
  RouteInvalidError, RunExistsError, RunIdInvalidError, RunNotFoundError, StateInvalidError, UnknownInterruptError,
  UnknownWorkflowError, fail,
} from '../errors.js';
import { FAULT_POINTS, type FaultPoint, type SequencerHooks } from '../faults.js';
import { renderInspection } from '../inspect.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { SqliteStore } from '../store/sqlite.js';
import { logFacts } from '../../test-support/contract-checks.js';
import { END, workflow, type Workflow } from '../workflow/workflow.js';

const core = await createCore('reference');
const input = { orderId: 'o-1', customerEmail: 'ada@example.com', amountCents: 2_000, reason: 'damaged' as const };
const approval = { approved: true, approver: 'kim' };

function setup(hooks?: SequencerHooks) {
  const sink = new MemoryEffectSink();
  const refund = createRefundWorkflow(sinkDeps(sink));
  const store = new MemoryStore();
  const remit = new Remit(store, core, [refund], hooks);
  return { sink, refund, store, remit };
}

async function kinds(store: MemoryStore, runId: string): Promise<string[]> {
  return (await remit0(store).inspect(runId)).records.map((r) => r.kind);
}
const remit0 = (store: MemoryStore) => new Remit(store, core, []);

describe('the sequencer on the refund workflow', () => {
  it('runs to the interrupt, resumes once, completes; keys come from the intent records', async () => {
    const { sink, refund, store, remit } = setup();
    const parked = await remit.start(refund, input, { runId: 'r1' });
    expect(parked).toMatchObject({ status: 'parked', headSeq: 6, interrupt: { id: 'managerApproval@6', node: 'managerApproval', parkedSeq: 6 } });
    const done = await remit.resume('r1', 'managerApproval@6', approval);
    expect(done.status).toBe('completed');
    expect(RefundState.parse(done.state)).toMatchObject({ refundCents: 2_000, approval });
    expect(await kinds(store, 'r1')).toEqual([
      'RUN_STARTED', 'NODE_COMPLETED', 'EFFECT_INTENT', 'EFFECT_ATTEMPT', 'EFFECT_DONE', 'NODE_COMPLETED', 'INTERRUPT_PARKED',
      'RESUME_CLAIMED', 'NODE_COMPLETED', 'EFFECT_INTENT', 'EFFECT_ATTEMPT', 'EFFECT_DONE', 'NODE_COMPLETED', 'RUN_COMPLETED',
    ]);
    expect((await remit0(store).inspect('r1')).records.every((r) => r.format === 2)).toBe(true);
    expect(Object.keys((await sink.counts()).byKey)).toEqual(['r1/chargeCard/2', 'r1/notifyCustomer/9']);
    expect(renderInspection(await remit.inspect('r1'))).toMatch(/RESUME_CLAIMED\s+managerApproval\s.*interrupt managerApproval@6/);
    expect(renderInspection(await remit.inspect('r1'))).toMatch(/EFFECT_ATTEMPT\s+chargeCard.*key r1\/chargeCard\/2, attempt 1/);
    // The lease reads as its owner and an ISO 8601 time, not the record's JSON with epoch ms.
    const attempt = (await remit.inspect('r1')).records.find((r) => r.kind === 'EFFECT_ATTEMPT');
    expect(attempt?.detail).toMatch(/^lease of \S+ until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('a refund of zero ends after the pure node (routing is a function of the state)', async () => {
    const { refund, remit } = setup();
    const done = await remit.start(refund, { ...input, amountCents: 300, reason: 'changed-mind' }, { runId: 'zero' });
    expect(done).toMatchObject({ status: 'completed', headSeq: 2, state: { refundCents: 0 } });
  });

  it('calls the hooks at the named points, in order', async () => {
    const seen: string[] = [];
    const { refund, remit } = setup({ at: (point, info) => void seen.push(`${point}${info.kinds ? ':' + info.kinds.join('+') : ''}`) });
    const parked = await remit.start(refund, input, { runId: 'h' });
    await remit.resume('h', parked.interrupt!.id, approval);
    await remit.fork('h', 1, { newRunId: 'h2' });
    expect(seen).toContain('pure.before-return');
    expect(seen).toContain('effect.before-handler');
    expect(seen).toContain('effect.after-handler');
    expect(seen).toContain('resume.after-claim:RESUME_CLAIMED');
    expect(seen).toContain('append.after:EFFECT_INTENT+EFFECT_ATTEMPT');
    expect(seen).toContain('append.after:EFFECT_DONE+NODE_COMPLETED');
    expect(seen).toContain('append.after:EFFECT_DONE+NODE_COMPLETED+RUN_COMPLETED');
    expect(seen.slice(-2)).toEqual(['fork.before-store:FORKED', 'fork.after-store:FORKED']);
    const used = new Set(seen.map((s) => s.split(':')[0] as FaultPoint));
    expect(FAULT_POINTS.filter((p) => !used.has(p))).toEqual([]);
  });

  it('start reads nothing from the store: an existing id is refused by the conditional append (SQLite), the log untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'remit-start-'));
    try {
      const sqlite = new SqliteStore(join(dir, 'remit.db'));
      const reads: string[] = [];
      const watched = new Proxy(sqlite, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver) as unknown;
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (typeof key === 'string' && key.startsWith('read')) reads.push(key);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      const counter = workflow({ name: 'counter', version: '1', state: z.object({ n: z.number().int() }) })
        .pure('add', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n < 5 ? 'add' : END) })
        .build();
      const remit = new Remit(watched, core, [counter]);
      expect(await remit.start(counter, { n: 0 }, { runId: 'taken' })).toMatchObject({ status: 'completed', state: { n: 5 } });
      expect(reads).toEqual([]);
      const before = await sqlite.readLog('taken');
      await expect(remit.start(counter, { n: 1 }, { runId: 'taken' })).rejects.toBeInstanceOf(RunExistsError);
      expect(await sqlite.readLog('taken')).toEqual(before);
      await sqlite.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses bad starts: invalid input names the field, an existing id, a bad id, an unknown workflow', async () => {
    const { refund, remit } = setup();
    await expect(remit.start(refund, { ...input, customerEmail: 'nope' }, { runId: 'x' })).rejects.toMatchObject({ code: 'REMIT_STATE_INVALID', field: 'customerEmail', runId: 'x' });
    await remit.start(refund, input, { runId: 'taken' });
    await expect(remit.start(refund, input, { runId: 'taken' })).rejects.toBeInstanceOf(RunExistsError);
    await expect(remit.start(refund, input, { runId: '' })).rejects.toBeInstanceOf(RunIdInvalidError);
    await expect(remit.start(refund, input, { runId: 'x'.repeat(201) })).rejects.toBeInstanceOf(RunIdInvalidError);
    await expect(remit.start('nope', input)).rejects.toBeInstanceOf(UnknownWorkflowError);
    // Named with the run id asked for, as errors.md says (and not created).
    const unknown = await remit.start('nope', input, { runId: 'asked' }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: 'REMIT_UNKNOWN_WORKFLOW', workflow: 'nope', runId: 'asked' });
    expect((unknown as Error).message).toMatch(/\[run asked\]$/);
    await expect(remit.continueRun('asked')).rejects.toBeInstanceOf(RunNotFoundError);
    await expect(remit.continueRun('missing')).rejects.toBeInstanceOf(RunNotFoundError);
  });

  it('resume: invalid value refused and nothing recorded; unknown id; duplicate; not parked', async () => {
    const { refund, store, remit } = setup();
    const parked = await remit.start(refund, input, { runId: 'r' });
    const before = await store.readLog('r');
    const invalid = remit.resume('r', parked.interrupt!.id, { approved: 'yes' });
    await expect(invalid).rejects.toBeInstanceOf(ResumeValueInvalidError);
    await expect(invalid).rejects.toMatchObject({ code: 'REMIT_RESUME_VALUE_INVALID', field: 'approved' });
    expect(await store.readLog('r')).toEqual(before);
    await expect(remit.resume('r', 'managerApproval@99', approval)).rejects.toBeInstanceOf(UnknownInterruptError);
    await expect(remit.resume('r', 'chargeCard@2', approval)).rejects.toBeInstanceOf(UnknownInterruptError);
    expect(await store.readLog('r')).toEqual(before);
    await remit.resume('r', parked.interrupt!.id, approval);
    const after = await store.readLog('r');
    const second = remit.resume('r', parked.interrupt!.id, approval);
    await expect(second).rejects.toBeInstanceOf(AlreadyConsumedError);
    await expect(second).rejects.toMatchObject({ code: 'REMIT_ALREADY_CONSUMED', seq: 7 });
    expect(await store.readLog('r')).toEqual(after);
    const zero = await remit.start(refund, { ...input, amountCents: 0 }, { runId: 'z' });
    expect(zero.status).toBe('completed');
    await expect(remit.resume('z', 'managerApproval@6', approval)).rejects.toBeInstanceOf(NotParkedError);
  });

  it('fork copies the prefix and leaves the source byte-identical; refusals are typed', async () => {
    const { refund, store, remit } = setup();
    const parked = await remit.start(refund, input, { runId: 's' });
    await remit.resume('s', parked.interrupt!.id, approval);
    const source = await store.readLog('s');
    await expect(remit.fork('s', 2)).rejects.toBeInstanceOf(NotACheckpointError);
    // The record's kind is named (what is at seq 3 is not a checkpoint, and which it is).
    await expect(remit.fork('s', 3)).rejects.toMatchObject({ code: 'REMIT_NOT_A_CHECKPOINT', runId: 's', seq: 3, recordKind: (await remit.inspect('s')).records[3]!.kind });
    await expect(remit.fork('s', 3)).rejects.toThrow(/^the record at this seq \([A-Z_]+\) is not a checkpoint/);
    await expect(remit.fork('s', 40)).rejects.toBeInstanceOf(BeyondHeadError);
    const fork = await remit.fork('s', 8, { intent: { why: 'redo the notification' }, newRunId: 's-f' });
    expect(fork).toEqual({ runId: 's-f', sourceRunId: 's', checkpointSeq: 8, forkSeq: 9 });
    expect(await store.readLog('s')).toEqual(source);
    await expect(remit.fork('s', 8, { newRunId: 's-f' })).rejects.toBeInstanceOf(ForkTargetExistsError);
    const done = await remit.continueRun('s-f');
    expect(done.status).toBe('completed');
    const facts = logFacts('s-f', await store.readLog('s-f'));
    expect(facts.intents.map((i) => i.key)).toEqual(['s/chargeCard/2', 's-f/notifyCustomer/10']);
    // The fork at the last checkpoint (the route ended) only needs RUN_COMPLETED: FINISH_RUN.
    const tail = await remit.fork('s', 12, { newRunId: 's-end' });
    expect((await remit.continueRun(tail.runId)).status).toBe('completed');
    expect(await kinds(store, 's-end')).toEqual([...(await kinds(store, 's')).slice(0, 13), 'FORKED', 'RUN_COMPLETED']);
  });

  it('continuing from an older checkpoint without a fork is refused', async () => {
    const { refund, store, remit } = setup();
    await remit.start(refund, input, { runId: 'c' });
    const before = await store.readLog('c');
    const atCheckpoint = await remit.continueRun('c', { fromSeq: 1 }).then(() => null, (e: unknown) => e);
    expect(atCheckpoint).toBeInstanceOf(ImplicitForkError);
    expect(atCheckpoint).toMatchObject({ requestedSeq: 1, requestedIsCheckpoint: true });
    expect((atCheckpoint as Error).message).toMatch(/fork the run at that checkpoint/);
    // A seq below the head that is not a checkpoint: the advice must not be a fork there (fork refuses it).
    const notCheckpoint = (await kinds(store, 'c')).findIndex((k, seq) => seq > 0 && k !== 'RUN_STARTED' && k !== 'NODE_COMPLETED');
    expect(notCheckpoint).toBeGreaterThan(0);
    const elsewhere = await remit.continueRun('c', { fromSeq: notCheckpoint }).then(() => null, (e: unknown) => e);
    expect(elsewhere).toMatchObject({ code: 'REMIT_IMPLICIT_FORK', requestedSeq: notCheckpoint, requestedIsCheckpoint: false });
    expect((elsewhere as Error).message).toMatch(new RegExp(`seq ${notCheckpoint} is not a checkpoint`));
    await expect(remit.fork('c', notCheckpoint)).rejects.toBeInstanceOf(NotACheckpointError);
    await expect(remit.continueRun('c', { fromSeq: 9 })).rejects.toBeInstanceOf(BeyondHeadError);
    expect(await store.readLog('c')).toEqual(before);
    expect((await remit.continueRun('c', { fromSeq: 6 })).status).toBe('parked');
  });

  it('a changed definition is refused with the difference named', async () => {
    const { refund, store, remit } = setup();
    await remit.start(refund, input, { runId: 'd' });
    const v2 = workflow({ name: 'refund', version: '2.0.0', state: RefundState })
      .pure('computeRefund', { run: () => ({}), next: END })
      .build();
    const other = new Remit(store, core, [v2]);
    const error = await other.continueRun('d').catch((e) => e);
    expect(error).toBeInstanceOf(DefinitionMismatchError);
    expect(error.differences).toEqual(expect.arrayContaining(['version changed from 1.0.0 to 2.0.0', 'node chargeCard removed']));
    // workflowOf answers the same, without moving the run: what `fork --continue` asks first.
    const before = await kinds(store, 'd');
    await expect(other.workflowOf('d')).rejects.toMatchObject({ code: 'REMIT_DEFINITION_MISMATCH', runId: 'd', differences: error.differences });
    await expect(new Remit(store, core, []).workflowOf('d')).rejects.toMatchObject({ code: 'REMIT_UNKNOWN_WORKFLOW', workflow: 'refund', runId: 'd' });
    expect(await remit.workflowOf('d')).toBe(refund);
    await expect(remit.workflowOf('nope')).rejects.toBeInstanceOf(RunNotFoundError);
    expect(await kinds(store, 'd')).toEqual(before);
  });

  it('a corrupted record is reported with its seq and nothing is run', async () => {
    const { refund, store, remit } = setup();
    await remit.start(refund, input, { runId: 'bad' });
    const backing = (store as MemoryStore).backing;
    backing.runs.get('bad')!.records[3]!.bytes[20]! ^= 0xff;
    const continued = remit.continueRun('bad');
    await expect(continued).rejects.toBeInstanceOf(LogCorruptError);
    await expect(continued).rejects.toMatchObject({ code: 'REMIT_LOG_CORRUPT', seq: 3, runId: 'bad' });
    expect((await remit.inspect('bad')).error).toMatchObject({ seq: 3 });
  });

  it('of two sequencers on one run the loser stops with ConflictError and writes nothing', async () => {
    const backing = new MemoryBacking();
    const sink = new MemoryEffectSink();
    const refund = createRefundWorkflow(sinkDeps(sink));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let paused!: () => void;
    const reached = new Promise<void>((r) => (paused = r));
    // A stops just before appending computeRefund's completion; B runs the whole step meanwhile.
    const hooksA: SequencerHooks = {
      async at(point, info) {
        if (point === 'append.before' && info.kinds?.[0] === 'NODE_COMPLETED' && info.node === 'computeRefund') {
          paused();
          await gate;
        }
      },
    };
    const starter = new Remit(new MemoryStore({ backing }), core, [refund], { at: (p, i) => { if (p === 'append.after' && i.kinds?.[0] === 'RUN_STARTED') throw new Error('stop after start'); } });
    await expect(starter.start(refund, input, { runId: 'race' })).rejects.toThrow('stop after start');
    const a = new Remit(new MemoryStore({ backing }), core, [refund], hooksA).continueRun('race');
    await reached;
    const b = await new Remit(new MemoryStore({ backing }), core, [refund]).continueRun('race');
    expect(b.status).toBe('parked');
    const log = backing.runs.get('race')!.records.map((r) => r.bytes);
    release();
    await expect(a).rejects.toBeInstanceOf(ConflictError);
    expect(backing.runs.get('race')!.records.map((r) => r.bytes)).toEqual(log);
    expect((await sink.counts()).byEffect['chargeCard']).toEqual({ invocations: 1, applied: 1 });
  });
});

describe('node failures', () => {
  const State = z.object({ n: z.number().int().max(5), note: z.string().optional() });
  let calls = 0;
  let mode: 'ok' | 'throw' | 'terminal' | 'terminal-unpaired' | 'bad-result' | 'big' = 'ok';
  const wf = workflow({ name: 'failing', version: '1', state: State })
    .effect('bump', {
      run: async (_s, ctx) => {
        calls += 1;
        if (mode === 'throw') throw new Error('provider down');
        if (mode === 'terminal') fail('CARD_DECLINED', 'the card was declined');
        if (mode === 'terminal-unpaired') fail('DECLINED\ud800', 'half a pair: \udc00!');
        if (mode === 'bad-result') return { n: 10n } as unknown as { n: number };
        return { n: mode === 'big' ? 99 : 1, key: ctx.idempotencyKey };
      },
      apply: (s, r) => ({ n: s.n + r.n }),
      next: 'route',
    })
    .pure('route', { run: (s) => ({ note: `n=${s.n}` }), next: (s) => (s.n > 3 ? 'nowhere' : END) })
    .build();

  function fresh() {
    calls = 0;
    const store = new MemoryStore();
    return { store, remit: new Remit(store, core, [wf]) };
  }

  it('an ordinary throw releases the attempt (EFFECT_RELEASED); the next continue claims attempt 2 at once, same key', async () => {
    const { store, remit } = fresh();
    mode = 'throw';
    const thrown = await remit.start(wf, { n: 0 }, { runId: 'f' }).then(() => null, (e: unknown) => e);
    expect(thrown).toBeInstanceOf(HandlerThrewError);
    expect(logFacts('f', await store.readLog('f')).records.map((r) => r.kind)).toEqual([1, 3, 10, 11]);
    // The message says what the log now holds: the release, not "nothing".
    expect((thrown as Error).message).toMatch(/EFFECT_RELEASED was recorded \(attempt 1 is given up/);
    expect((thrown as Error).message).not.toMatch(/nothing was recorded/);
    mode = 'ok';
    // Another instance (another id, a live 30 s lease on attempt 1 were it not released) goes on at once.
    const done = await new Remit(store, core, [wf]).continueRun('f');
    expect(done).toMatchObject({ status: 'completed', state: { n: 1, note: 'n=1' } });
    expect(calls).toBe(2);
    const records = logFacts('f', await store.readLog('f')).records;
    expect(records.map((r) => r.kind)).toEqual([1, 3, 10, 11, 10, 4, 2, 2, 8]);
    expect(records.filter((r) => r.kind === 10).map((r) => (r as { attempt: number }).attempt)).toEqual([1, 2]);
  });

  it('a fail() code or message that is not well-formed Unicode is written with U+FFFD, and reported as written before and after recovery', async () => {
    const { store, remit } = fresh();
    mode = 'terminal-unpaired';
    const failed = await remit.start(wf, { n: 0 }, { runId: 'u' });
    const written = { node: 'bump', code: 'DECLINED\ufffd', message: 'half a pair: \ufffd!' };
    expect(failed).toMatchObject({ status: 'failed', failure: written });
    expect((await new Remit(store, core, [wf]).status('u')).failure).toEqual(written);
  });

  it('recoverAll reports a running run of a workflow the instance does not have (UnknownWorkflowError), and leaves it for one that has', async () => {
    const { store, remit } = fresh();
    mode = 'throw';
    await expect(remit.start(wf, { n: 0 }, { runId: 'elsewhere' })).rejects.toBeInstanceOf(HandlerThrewError);
    const before = await store.readLog('elsewhere');
    const other = workflow({ name: 'other', version: '1', state: State }).pure('p', { run: () => ({}), next: END }).build();
    const outcomes = await new Remit(store, core, [other]).recoverAll();
    expect(outcomes).toEqual([{ runId: 'elsewhere', error: expect.objectContaining({ code: 'REMIT_UNKNOWN_WORKFLOW', runId: 'elsewhere' }) }]);
    expect(String((outcomes[0] as { error: Error }).error.message)).toMatch(/failing.*known: other/);
    expect(await store.readLog('elsewhere')).toEqual(before);
    mode = 'ok';
    expect(await new Remit(store, core, [wf]).recoverAll()).toEqual([{ runId: 'elsewhere', result: expect.objectContaining({ status: 'completed' }) }]);
  });

  it('a TerminalFailure fails the run with RUN_FAILED', async () => {
    const { remit } = fresh();
    mode = 'terminal';
    const failed = await remit.start(wf, { n: 0 }, { runId: 't' });
    expect(failed).toMatchObject({ status: 'failed', failure: { node: 'bump', code: 'CARD_DECLINED', message: 'the card was declined' } });
    expect((await remit.continueRun('t')).status).toBe('failed');
  });

  it('an invalid state after an effect records the effect as done, not the state, and never calls the handler again', async () => {
    const { store, remit } = fresh();
    mode = 'big';
    const error = await remit.start(wf, { n: 0 }, { runId: 'v' }).catch((e) => e);
    expect(error).toBeInstanceOf(StateInvalidError);
    expect(error).toMatchObject({ field: 'n', node: 'bump', runId: 'v', seq: 4 });
    expect(logFacts('v', await store.readLog('v')).records.map((r) => r.kind)).toEqual([1, 3, 10, 4]);
    // The refusal says the outside effect happened: the caller must not retry it by hand.
    expect(error.message).toMatch(/; EFFECT_DONE was recorded \(the outside effect happened\); the node's completion was not, and runs again next time \[run v, seq 4, node bump, field n\]$/);
    const again = await remit.continueRun('v').catch((e: unknown) => e);
    expect(again).toBeInstanceOf(StateInvalidError);
    expect((again as Error).message).toMatch(/; the effect's result is recorded \(EFFECT_DONE at seq 3; the handler is not called again\); the node's completion was not/);
    expect(calls).toBe(1);
  });

  it('an effect apply that throws: the error says EFFECT_DONE was recorded, and the handler is not called again', async () => {
    let handlerCalls = 0;
    let applyThrows = true;
    const flaky = workflow({ name: 'flaky-apply', version: '1', state: z.object({ n: z.number() }) })
      .effect('send', {
        run: () => ((handlerCalls += 1), { sent: true }),
        apply: (s) => {
          if (applyThrows) throw new Error('apply broke');
          return { n: s.n + 1 };
        },
        next: END,
      })
      .build();
    const store = new MemoryStore();
    const remit = new Remit(store, core, [flaky]);
    const error = await remit.start(flaky, { n: 0 }, { runId: 'a' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HandlerThrewError);
    expect((error as Error).message).toMatch(/apply broke; EFFECT_DONE was recorded \(the outside effect happened\)/);
    const again = await remit.continueRun('a').catch((e: unknown) => e);
    expect((again as Error).message).toMatch(/apply broke; the effect's result is recorded \(EFFECT_DONE at seq 3; the handler is not called again\)/);
    applyThrows = false;
    expect(await remit.continueRun('a')).toMatchObject({ status: 'completed', state: { n: 1 } });
    expect(handlerCalls).toBe(1);
  });

  it('a route to an unknown node and a non-JSON result are typed errors that record no outcome', async () => {
    const { store, remit } = fresh();
    mode = 'ok';
    await remit.start(wf, { n: 3 }, { runId: 'route' }).catch((e) => expect(e).toBeInstanceOf(RouteInvalidError));
    expect(logFacts('route', await store.readLog('route')).completedNodes).toEqual(['bump']);
    mode = 'bad-result';
    await expect(remit.start(wf, { n: 0 }, { runId: 'json' })).rejects.toBeInstanceOf(NotJsonError);
    // The attempt is given up (released): no outcome will come from it.
    expect(logFacts('json', await store.readLog('json')).records.map((r) => r.kind)).toEqual([1, 3, 10, 11]);
  });
});

describe('storage policy', () => {
  const Fixed = z.object({ i: z.number(), payload: z.string() });
  const History = z.object({ i: z.number(), history: z.array(z.object({ step: z.number(), note: z.string() })) });
  function loop<S extends z.ZodType>(name: string, state: S, step: (s: z.output<S>) => Partial<z.output<S>>, steps: number): Workflow {
    return workflow({ name, version: '1', state })
      .pure('step', { run: (s) => step(s as z.output<S>), next: (s) => ((s as unknown as { i: number }).i >= steps ? END : 'step') })
      .build();
  }
  async function logBytes(wf: Workflow, initial: unknown): Promise<number> {
    const store = new MemoryStore();
    const result = await new Remit(store, core, [wf]).start(wf, initial, { runId: 'g' });
    expect(result.status).toBe('completed');
    return (await store.readLog('g')).length;
  }

  it('grows linearly in steps for a fixed-size state and for a history-carrying state', async () => {
    const fixed = (n: number) => loop(`fixed${n}`, Fixed, (s) => ({ i: s.i + 1, payload: `p${s.i}`.padEnd(400, 'x') }), n);
    const history = (n: number) => loop(`hist${n}`, History, (s) => ({ i: s.i + 1, history: [...s.history, { step: s.i, note: 'n'.repeat(40) }] }), n);
    const f100 = await logBytes(fixed(100), { i: 0, payload: '' });
    const f200 = await logBytes(fixed(200), { i: 0, payload: '' });
    const h100 = await logBytes(history(100), { i: 0, history: [] });
    const h200 = await logBytes(history(200), { i: 0, history: [] });
    // Doubling the steps about doubles the bytes (a full snapshot per step would quadruple them
    // for the history-carrying state).
    console.log(`storage policy: fixed-size state ${f100} B / 100 steps, ${f200} B / 200 steps; history-carrying ${h100} B / 100, ${h200} B / 200`);
    expect(f200 / f100).toBeLessThan(2.2);
    expect(h200 / h100).toBeLessThan(2.2);
    expect(h200).toBeLessThan(200 * 200);
  });
});
