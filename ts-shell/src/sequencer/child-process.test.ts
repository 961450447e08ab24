/**
 * Real processes: a child driving the refund run is killed with SIGKILL at named fault points and
 * the run is recovered here; then several processes race on one SQLite file, on one run's steps
 * and on one interrupt's resume. Effects are counted at a file sink shared by all processes.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sinkDeps } from '../../../examples/refund/deps.js';
import { Approval, createRefundWorkflow, RefundState } from '../../../examples/refund/workflow.js';
import { createCore } from '../core/index.js';
import type { RecoveryCore } from '../core/types.js';
import { FileEffectSink } from '../testing/effect-sink.js';
import { Remit } from '../remit.js';
import { SqliteStore } from '../store/sqlite.js';
import {
  checkCheckpointValidity, checkConsumeOnce, checkEffectsExactlyOnce, checkPrefixContinuation, logFacts,
} from '../../test-support/contract-checks.js';
import { spawnChild, type ChildExit } from '../../../examples/refund/child/spawn-child.js';

const root = mkdtempSync(join(tmpdir(), 'remit-child-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let coreKind: 'wasm' | 'reference' = 'wasm';
let core: RecoveryCore;
try {
  core = await createCore('wasm');
} catch {
  coreKind = 'reference';
  core = await createCore('reference');
}

const input = { orderId: 'o-77', customerEmail: 'ada@example.com', amountCents: 9_900, reason: 'damaged' as const };
const approval = { approved: true, approver: 'kim' };
const FULL_PATH = ['computeRefund', 'chargeCard', 'managerApproval', 'notifyCustomer'];
const REPLICA = 'replica-a';

let caseNo = 0;
function fixture() {
  const dir = join(root, `case-${caseNo++}`);
  const db = join(dir, 'remit.db');
  const sinkDir = join(dir, 'sink');
  const sink = new FileEffectSink(sinkDir);
  // The recovering sequencer is the killed child's replica restarted: the same instance id.
  const open = (hooks?: ConstructorParameters<typeof Remit>[3], instanceId = REPLICA) =>
    new Remit(new SqliteStore(db), core, [createRefundWorkflow(sinkDeps(new FileEffectSink(sinkDir)))], hooks, {}, { instanceId });
  return { dir, db, sinkDir, sink, open };
}

async function assertContract(f: ReturnType<typeof fixture>, runId: string, expectCompleted: boolean): Promise<void> {
  const store = new SqliteStore(f.db);
  const log = await store.readLog(runId);
  await store.close();
  const facts = logFacts(runId, log);
  const violations = [
    ...checkPrefixContinuation(new Uint8Array(), log, facts, FULL_PATH),
    ...checkCheckpointValidity(facts, RefundState, { managerApproval: Approval }),
    ...checkConsumeOnce(facts),
    ...checkEffectsExactlyOnce([facts], await f.sink.counts()),
  ];
  expect(violations).toEqual([]);
  expect(core.recover(log)).toMatchObject({ ok: true });
  if (expectCompleted) {
    expect(facts.completedNodes).toEqual(FULL_PATH);
    const counts = (await f.sink.counts()).byEffect;
    expect(counts['chargeCard']?.applied).toBe(1);
    expect(counts['notifyCustomer']?.applied).toBe(1);
  }
}

/** Run `tasks` with at most `limit` at a time (two cores shared with other suites). */
async function limited<T>(limit: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  }));
  return results;
}

const START_SIDE_KILLS = [
  'append.after:RUN_STARTED',
  'pure.before-return',
  'append.before:NODE_COMPLETED',
  'append.after:EFFECT_INTENT',
  'effect.after-handler@chargeCard',
  'append.after:EFFECT_DONE',
  'append.after:INTERRUPT_PARKED',
];
const RESUME_SIDE_KILLS = [
  'append.after:RESUME_CLAIMED',
  'effect.before-handler@notifyCustomer',
  'effect.after-handler@notifyCustomer',
];

describe(`SIGKILL mid-run, then recovery (${coreKind} core in the children and here)`, () => {
  it(`completes with every effect applied once after a kill at each of ${START_SIDE_KILLS.length + RESUME_SIDE_KILLS.length} points`, async () => {
    const startSide = START_SIDE_KILLS.map((at) => async () => {
      const f = fixture();
      const child = spawnChild({ db: f.db, sinkDir: f.sinkDir, core: coreKind, action: 'start', runId: 'k', input, fault: { at, mode: 'kill' }, instanceId: REPLICA });
      const exit = await child.exited;
      expect({ at, signal: exit.signal, faulted: exit.events.some((e) => e.event === 'fault') }).toEqual({ at, signal: 'SIGKILL', faulted: true });
      const remit = f.open();
      const parked = await remit.continueRun('k');
      expect(parked.status).toBe('parked');
      expect((await remit.resume('k', parked.interrupt!.id, approval)).status).toBe('completed');
      await remit.close();
      await assertContract(f, 'k', true);
      return { at, invocations: (await f.sink.counts()).byEffect['chargeCard']?.invocations };
    });
    const resumeSide = RESUME_SIDE_KILLS.map((at) => async () => {
      const f = fixture();
      const remit = f.open();
      const parked = await remit.start(createRefundWorkflow(sinkDeps(f.sink)), input, { runId: 'k' });
      await remit.close();
      const child = spawnChild({
        db: f.db, sinkDir: f.sinkDir, core: coreKind, action: 'resume', runId: 'k', interruptId: parked.interrupt!.id, value: approval,
        fault: { at, mode: 'kill' }, instanceId: REPLICA,
      });
      const exit = await child.exited;
      expect({ at, signal: exit.signal }).toEqual({ at, signal: 'SIGKILL' });
      const again = f.open();
      expect((await again.continueRun('k')).status).toBe('completed');
      await again.close();
      await assertContract(f, 'k', true);
      return { at, invocations: (await f.sink.counts()).byEffect['notifyCustomer']?.invocations };
    });
    const outcomes = await limited(2, [...startSide, ...resumeSide]);
    // A kill between the outside effect and its record makes the recovery call the handler again
    // with the same key: two calls, one application.
    expect(outcomes.find((o) => o.at === 'effect.after-handler@chargeCard')?.invocations).toBe(2);
    expect(outcomes.find((o) => o.at === 'append.after:EFFECT_INTENT')?.invocations).toBe(1);
  });
});

function errorCode(exit: ChildExit): string | undefined {
  const event = exit.events.find((e) => e.event === 'error');
  return (event?.['error'] as { code?: string } | undefined)?.code;
}

describe(`several processes on one SQLite file (${coreKind} core)`, () => {
  it('three sequencers continuing one run: each step is written once, the handler is called once, losers stop with REMIT_CONFLICT or REMIT_EFFECT_IN_FLIGHT', async () => {
    const f = fixture();
    const starter = f.open({ at: (point, info) => { if (point === 'append.after' && info.kinds?.[0] === 'RUN_STARTED') throw new Error('stop after start'); } });
    await expect(starter.start(createRefundWorkflow(sinkDeps(f.sink)), input, { runId: 'race' })).rejects.toThrow('stop after start');
    await starter.close();
    const children = [0, 1, 2].map(() => spawnChild({ db: f.db, sinkDir: f.sinkDir, core: coreKind, action: 'continue', runId: 'race', waitForGo: true }));
    await Promise.all(children.map((c) => c.waitFor('ready')));
    for (const c of children) c.go();
    const exits = await Promise.all(children.map((c) => c.exited));
    const summary = exits.map((e) => ({ code: e.code, error: errorCode(e) }));
    console.log('continue race outcomes:', JSON.stringify(summary), 'chargeCard calls:', (await f.sink.counts()).byEffect['chargeCard']?.invocations);
    expect(summary.filter((s) => s.code === 0).length, JSON.stringify(summary)).toBeGreaterThanOrEqual(1);
    for (const s of summary) {
      expect([{ code: 0, error: undefined }, { code: 1, error: 'REMIT_CONFLICT' }, { code: 1, error: 'REMIT_EFFECT_IN_FLIGHT' }]).toContainEqual(s);
    }
    const remit = f.open();
    const status = await remit.status('race');
    await remit.close();
    // Losers stopped (a lost append, or the winner's attempt in flight); the winner drove on to the park.
    expect(status.status).toBe('parked');
    expect((await f.sink.counts()).byEffect['chargeCard']).toEqual({ invocations: 1, applied: 1 });
  });

  for (const crash of ['append.after:EFFECT_INTENT', 'effect.after-handler@chargeCard'] as const) {
    it(`four processes recovering a run killed at ${crash} at once: charge's handler is called ${crash.startsWith('effect') ? 'once more than before the crash' : 'exactly once'}`, async () => {
      const f = fixture();
      const killed = spawnChild({
        db: f.db, sinkDir: f.sinkDir, core: coreKind, action: 'start', runId: 'rec', input, fault: { at: crash, mode: 'kill' },
        instanceId: 'replica-dead', effectLeaseMs: 500,
      });
      expect((await killed.exited).signal).toBe('SIGKILL');
      const before = (await f.sink.counts()).byEffect['chargeCard']?.invocations ?? 0;
      const children = [0, 1, 2, 3].map((i) => spawnChild({
        db: f.db, sinkDir: f.sinkDir, core: coreKind, action: 'continue', runId: 'rec', waitForGo: true,
        instanceId: `recoverer-${i}`, effectLeaseMs: 20_000, waitForEffectMs: 30_000,
      }));
      await Promise.all(children.map((c) => c.waitFor('ready')));
      for (const c of children) c.go();
      const exits = await Promise.all(children.map((c) => c.exited));
      expect(exits.map((e) => ({ code: e.code, error: errorCode(e) }))).toEqual(children.map(() => ({ code: 0, error: undefined })));
      const counts = (await f.sink.counts()).byEffect['chargeCard'];
      expect({ before, after: counts?.invocations, applied: counts?.applied }).toEqual({ before: crash.startsWith('effect') ? 1 : 0, after: before + 1, applied: 1 });
      const remit = f.open();
      expect((await remit.resume('rec', (await remit.status('rec')).interrupt!.id, approval)).status).toBe('completed');
      await remit.close();
      await assertContract(f, 'rec', true);
    });
  }

  it('four processes resuming one interrupt: exactly one claim, the others get REMIT_ALREADY_CONSUMED', async () => {
    const f = fixture();
    const remit = f.open();
    const parked = await remit.start(createRefundWorkflow(sinkDeps(f.sink)), input, { runId: 'resume-race' });
    await remit.close();
    const children = [0, 1, 2, 3].map((i) =>
      spawnChild({
        db: f.db, sinkDir: f.sinkDir, core: coreKind, action: 'resume', runId: 'resume-race', interruptId: parked.interrupt!.id,
        value: { approved: i % 2 === 0, approver: `manager-${i}` }, waitForGo: true,
      }),
    );
    await Promise.all(children.map((c) => c.waitFor('ready')));
    for (const c of children) c.go();
    const exits = await Promise.all(children.map((c) => c.exited));
    const winners = exits.filter((e) => e.code === 0);
    expect(winners).toHaveLength(1);
    for (const e of exits.filter((x) => x.code !== 0)) expect({ code: e.code, error: errorCode(e) }).toEqual({ code: 1, error: 'REMIT_ALREADY_CONSUMED' });
    const winnerIndex = exits.indexOf(winners[0]!);
    const store = new SqliteStore(f.db);
    const facts = logFacts('resume-race', await store.readLog('resume-race'));
    await store.close();
    expect(facts.claims).toHaveLength(1);
    expect(facts.claims[0]!.value).toMatchObject({ approver: `manager-${winnerIndex}` });
    await assertContract(f, 'resume-race', true);
  });
});
