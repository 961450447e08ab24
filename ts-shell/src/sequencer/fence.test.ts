/**
 * The invocation fence in the shell (docs/guide.md, "Concurrent sequencers"): the takeover rule
 * case by case, the lease codec, and the fence end to end on the memory store with the reference
 * core: takeover by the same instance, refusal and waiting across instances, lease expiry, the
 * per-effect lease, the in-process registry, release on a thrown handler, the run id check, and
 * the options' checks.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { encodeRecord, encodeRecordV2 } from '../core/codec.js';
import { chainValueBefore } from '../core/framing.js';
import { RecordKind } from '../core/types.js';
import {
  ConflictError, DefinitionInvalidError, EffectInFlightError, HandlerThrewError, LogCorruptError, OptionInvalidError,
} from '../errors.js';
import type { SequencerHooks } from '../faults.js';
import { Remit, type FenceOptions } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { logFacts } from '../../test-support/contract-checks.js';
import { pauseAt } from '../../test-support/pause-at.js';
import { END, workflow } from '../workflow/workflow.js';
import { decideTakeover, decodeLease, encodeLease, inFlightCalls, OWN_CALL_RETRY_MS, type FenceSettings } from './fence.js';

const core = await createCore('reference');

describe('the takeover rule', () => {
  const me: FenceSettings = { instanceId: 'me', effectLeaseMs: 1000, now: () => 5_000 };
  it('takes over its own idle attempt at once, any attempt whose lease expired, and an unreadable lease', () => {
    expect(decideTakeover({ owner: 'me', leaseUntilMs: 99_000 }, me, false)).toEqual({ takeover: true, reason: 'own-idle' });
    expect(decideTakeover({ owner: 'other', leaseUntilMs: 5_000 }, me, false)).toEqual({ takeover: true, reason: 'lease-expired' });
    expect(decideTakeover(null, me, false)).toEqual({ takeover: true, reason: 'lease-unreadable' });
  });
  it('leaves alone a live lease of another instance, and any attempt a call of this process is running', () => {
    expect(decideTakeover({ owner: 'other', leaseUntilMs: 5_001 }, me, false)).toEqual({ takeover: false, owner: 'other', leaseExpiresAtMs: 5_001, retryAfterMs: 1, runningHere: false });
    expect(decideTakeover({ owner: 'other', leaseUntilMs: 9_000 }, me, false)).toMatchObject({ takeover: false, retryAfterMs: 4_000 });
    expect(decideTakeover({ owner: 'me', leaseUntilMs: 99_000 }, me, true)).toMatchObject({ takeover: false, owner: 'me' });
    expect(decideTakeover({ owner: 'other', leaseUntilMs: 0 }, me, true)).toMatchObject({ takeover: false, owner: 'other' });
  });
  it('retryAfterMs is the lease\'s remaining time, except for a call of this process: then a poll interval, whatever the lease says', () => {
    expect(decideTakeover({ owner: 'other', leaseUntilMs: 9_000 }, me, false)).toEqual({ takeover: false, owner: 'other', leaseExpiresAtMs: 9_000, retryAfterMs: 4_000, runningHere: false });
    expect(decideTakeover({ owner: 'other', leaseUntilMs: 99_000 }, me, true)).toEqual({ takeover: false, owner: 'other', leaseExpiresAtMs: 99_000, retryAfterMs: OWN_CALL_RETRY_MS, runningHere: true });
    expect(OWN_CALL_RETRY_MS).toBe(50);
  });
  it('refuses a clock reading that is not a time a Date holds (a stub answering undefined), naming the run, the seq and the node', () => {
    for (const reading of [undefined, Number.NaN, Number.POSITIVE_INFINITY, '5000', 8.64e15 + 1]) {
      const broken: FenceSettings = { ...me, now: () => reading as number };
      expect(() => decideTakeover({ owner: 'other', leaseUntilMs: 9_000 }, broken, false, { runId: 'r', seq: 2, node: 'send' }), String(reading))
        .toThrow(expect.objectContaining({ code: 'REMIT_OPTION_INVALID', option: 'now', runId: 'r', seq: 2, node: 'send' }));
    }
  });
  it('leases round-trip; anything else is unreadable', () => {
    expect(decodeLease(encodeLease({ owner: 'a', leaseUntilMs: 12 }))).toEqual({ owner: 'a', leaseUntilMs: 12 });
    for (const bad of ['', '{', '[]', '{"owner":1,"leaseUntilMs":2}', '{"owner":"a"}', '{"owner":"a","leaseUntilMs":"2"}']) {
      expect(decodeLease(new TextEncoder().encode(bad)), bad).toBeNull();
    }
  });
  it('the in-process registry admits one call per (instance, run, key, record 0) at a time', () => {
    const a = inFlightCalls.enter('i', 'r', 'k', '1');
    expect(a).not.toBeNull();
    expect(inFlightCalls.enter('i', 'r', 'k', '1')).toBeNull();
    expect(inFlightCalls.has('i', 'r', 'k', '1')).toBe(true);
    const other = inFlightCalls.enter('j', 'r', 'k', '1');
    expect(other).not.toBeNull();
    // The same run id and key in another store (another record 0) is another run's call.
    expect(inFlightCalls.has('i', 'r', 'k', '2')).toBe(false);
    // An unreadable lease names no owner: a call of any instance on the effect counts.
    expect(inFlightCalls.hasAnyOwner('r', 'k', '1')).toBe(true);
    expect(inFlightCalls.hasAnyOwner('r', 'k', '2')).toBe(false);
    a!.leave();
    other!.leave();
    expect(inFlightCalls.has('i', 'r', 'k', '1')).toBe(false);
    expect(inFlightCalls.hasAnyOwner('r', 'k', '1')).toBe(false);
    expect(() => a!.leave()).toThrow(/left twice/);
  });
});

const State = z.object({ n: z.number().int(), sent: z.string().optional() });

function setup(opts: { leaseMs?: number; handler?: () => Promise<string> } = {}) {
  const calls: string[] = [];
  const wf = workflow({ name: 'mail', version: '1', state: State })
    .effect('send', {
      run: async (_s, ctx) => {
        calls.push(`${ctx.idempotencyKey}#${ctx.attempt}`);
        return opts.handler ? opts.handler() : 'ok';
      },
      apply: (_s, r: string) => ({ sent: r }),
      next: END,
      ...(opts.leaseMs === undefined ? {} : { leaseMs: opts.leaseMs }),
    })
    .build();
  const backing = new MemoryBacking();
  const remit = (fence: Partial<FenceOptions>, hooks?: SequencerHooks) => new Remit(new MemoryStore({ backing }), core, [wf], hooks, {}, fence);
  /** A sequencer that stops (like a crash) right after the intent and attempt 1 are durable. */
  const crashAfterAttempt = async (instanceId: string, runId: string, effectLeaseMs = 30_000) => {
    const stop: SequencerHooks = { at(point, info) { if (point === 'append.after' && info.kinds?.includes('EFFECT_ATTEMPT')) throw new Error('crash'); } };
    await expect(remit({ instanceId, effectLeaseMs }, stop).start(wf, { n: 0 }, { runId })).rejects.toThrow('crash');
  };
  return { wf, calls, backing, remit, crashAfterAttempt, store: () => new MemoryStore({ backing }) };
}

describe('the registry of running calls', () => {
  // Two copies of the library in one process (two installed versions) share one registry: before,
  // each copy had its own, and one took over an attempt the other was executing under the same id.
  it('a second copy of the fence module sees the running calls of the first', async () => {
    const specifier = new URL('./fence.ts?second-copy', import.meta.url).href;
    const copy = (await import(/* @vite-ignore */ specifier)) as typeof import('./fence.js');
    expect(copy.inFlightCalls).not.toBe(inFlightCalls);
    const call = inFlightCalls.enter('pod-1', 'r', 'r/charge/2', '7');
    expect(call).not.toBeNull();
    expect(copy.inFlightCalls.has('pod-1', 'r', 'r/charge/2', '7')).toBe(true);
    expect(copy.inFlightCalls.enter('pod-1', 'r', 'r/charge/2', '7')).toBeNull();
    call!.leave();
    expect(copy.inFlightCalls.has('pod-1', 'r', 'r/charge/2', '7')).toBe(false);
  });
});

describe('the fence end to end (memory store, reference core)', () => {
  it('the same instance takes its own idle attempt over at once; the handler runs once, as attempt 2, with the same key', async () => {
    const t = setup();
    await t.crashAfterAttempt('replica-a', 'r');
    const done = await t.remit({ instanceId: 'replica-a' }).continueRun('r');
    expect(done.status).toBe('completed');
    expect(t.calls).toEqual(['r/send/1#2']);
    const facts = logFacts('r', await t.store().readLog('r'));
    expect(facts.attempts.map((a) => a.attempt)).toEqual([1, 2]);
  });

  it('another instance gets EffectInFlightError with the attempt, owner and lease, and writes nothing', async () => {
    const t = setup();
    await t.crashAfterAttempt('replica-a', 'r');
    const before = await t.store().readLog('r');
    const error = await t.remit({ instanceId: 'replica-b', now: () => Date.now() }).continueRun('r').catch((e) => e);
    expect(error).toBeInstanceOf(EffectInFlightError);
    expect(error).toMatchObject({ code: 'REMIT_EFFECT_IN_FLIGHT', runId: 'r', seq: 2, node: 'send', key: 'r/send/1', attempt: 1, owner: 'replica-a' });
    expect(error.retryAfterMs).toBeGreaterThan(25_000);
    expect(error.toJSON()).toMatchObject({ owner: 'replica-a', attempt: 1, key: 'r/send/1' });
    expect(await t.store().readLog('r')).toEqual(before);
    expect(t.calls).toEqual([]);
  });

  it('another instance takes over once the lease expired by its clock (the per-effect leaseMs overrides effectLeaseMs)', async () => {
    const t = setup({ leaseMs: 40 });
    await t.crashAfterAttempt('replica-a', 'r', 60_000);
    const attempt = logFacts('r', await t.store().readLog('r')).records.find((r) => r.kind === RecordKind.EFFECT_ATTEMPT);
    const lease = decodeLease((attempt as { lease: Uint8Array }).lease)!;
    expect(lease.owner).toBe('replica-a');
    expect(lease.leaseUntilMs - Date.now()).toBeLessThanOrEqual(40);
    const later = t.remit({ instanceId: 'replica-b', now: () => lease.leaseUntilMs });
    expect((await later.continueRun('r')).status).toBe('completed');
    expect(t.calls).toEqual(['r/send/1#2']);
  });

  it('two calls of one instance taking an expired attempt over at once: the one refused is told of the takeover (attempt 2, its seq, this owner, a live lease)', async () => {
    const t = setup({ handler: () => new Promise<string>((resolve) => setTimeout(() => resolve('ok'), 50)) });
    await t.crashAfterAttempt('replica-c', 'r', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const a = t.remit({ instanceId: 'replica-a' });
    // Both read attempt 1 expired; the second meets the first's takeover in this process's registry.
    const outcomes = await Promise.allSettled([a.continueRun('r'), a.continueRun('r')]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const error = (outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason as unknown;
    // Before: attempt 1 at its seq, owner replica-a (it is replica-c's) and a lease "until now".
    expect(error).toBeInstanceOf(EffectInFlightError);
    const attempts = logFacts('r', await t.store().readLog('r')).records.filter((r) => r.kind === RecordKind.EFFECT_ATTEMPT);
    expect(attempts.map((r) => (r as { attempt: number }).attempt)).toEqual([1, 2]);
    expect(error).toMatchObject({ attempt: 2, seq: attempts[1]!.seq, owner: 'replica-a', runId: 'r' });
    expect((error as EffectInFlightError).leaseExpiresAtMs).toBeGreaterThan(Date.now() + 10_000);
    expect(t.calls).toEqual(['r/send/1#2']);
  });

  it('waitForEffectMs is timed by the monotonic clock: a wall clock set back 5 s during the wait does not lengthen it', async () => {
    const t = setup();
    await t.crashAfterAttempt('replica-a', 'r', 60_000);
    // The lease has a minute left, and replica b's clock goes back 5 s at its second reading.
    let readings = 0;
    const steppedBack = () => Date.now() - (++readings > 1 ? 5_000 : 0);
    const began = performance.now();
    await expect(t.remit({ instanceId: 'replica-b', now: steppedBack }).continueRun('r', { waitForEffectMs: 300 })).rejects.toBeInstanceOf(EffectInFlightError);
    expect(performance.now() - began).toBeLessThan(2_000);
    expect(t.calls).toEqual([]);
  });

  it('waitForEffectMs waits for the lease and then goes on; a shorter wait gives up with the error', async () => {
    const t = setup();
    await t.crashAfterAttempt('replica-a', 'r', 150);
    const attempt = logFacts('r', await t.store().readLog('r')).records.find((r) => r.kind === RecordKind.EFFECT_ATTEMPT);
    const lease = decodeLease((attempt as { lease: Uint8Array }).lease)!;
    // Replica b's clock starts `left` ms before the lease's end and runs on with real time: the
    // lease has that long left whenever the call begins (with the real clock, a machine slow for
    // 150 ms between the crash and the first call let the lease run out before it).
    const leaseLeft = (left: number) => {
      const origin = Date.now();
      return () => lease.leaseUntilMs - left + (Date.now() - origin);
    };
    await expect(t.remit({ instanceId: 'replica-b', now: leaseLeft(10_000) }).continueRun('r', { waitForEffectMs: 20 })).rejects.toBeInstanceOf(EffectInFlightError);
    expect(t.calls).toEqual([]);
    const done = await t.remit({ instanceId: 'replica-b', now: leaseLeft(150) }).continueRun('r', { waitForEffectMs: 60_000 });
    expect(done.status).toBe('completed');
    expect(t.calls).toEqual(['r/send/1#2']);
    expect((await t.remit({ instanceId: 'replica-c' }).recoverAll({ waitForEffectMs: 10 }))).toEqual([]);
  });

  it('k sequencers of other instances recovering at once after the lease: one claims attempt 2 and calls the handler, the others lose or wait', async () => {
    const t = setup();
    await t.crashAfterAttempt('dead', 'r', 1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => t.remit({ instanceId: `r${i}` }).continueRun('r')));
    for (const o of outcomes) if (o.status === 'rejected') expect([ConflictError, EffectInFlightError].some((c) => o.reason instanceof c)).toBe(true);
    expect(outcomes.some((o) => o.status === 'fulfilled')).toBe(true);
    expect(t.calls).toEqual(['r/send/1#2']);
    const waiting = await Promise.all(Array.from({ length: 4 }, (_, i) => t.remit({ instanceId: `w${i}` }).continueRun('r', { waitForEffectMs: 1_000 })));
    expect(waiting.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  });

  it('another instance: retryAfterMs is the lease\'s remaining time and the message says so', async () => {
    const t = setup();
    await t.crashAfterAttempt('replica-a', 'r', 30_000);
    // A clock that stands still during the call: retryAfterMs is exactly the lease's end minus it.
    const at = Date.now();
    const error = await t.remit({ instanceId: 'replica-b', now: () => at }).continueRun('r').catch((e) => e);
    expect(error).toMatchObject({ code: 'REMIT_EFFECT_IN_FLIGHT', runningHere: false });
    expect(error.retryAfterMs).toBe(error.leaseExpiresAtMs - at);
    expect(error.retryAfterMs).toBeGreaterThan(0);
    expect(error.message).toMatch(new RegExp(`; retry after ${error.retryAfterMs} ms \\(when its lease runs out\\) \\[`));
  });

  it('another Remit instance of this process running the attempt: retryAfterMs is a poll interval, not the lease, and the message says so', async () => {
    let release!: () => void;
    const gate = new Promise<string>((resolve) => (release = () => resolve('ok')));
    const t = setup({ handler: () => gate });
    const first = t.remit({ instanceId: 'replica-a', effectLeaseMs: 60_000 }).start(t.wf, { n: 0 }, { runId: 'r' });
    while (t.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    const error = await t.remit({ instanceId: 'replica-b' }).continueRun('r').catch((e) => e);
    expect(error).toMatchObject({ code: 'REMIT_EFFECT_IN_FLIGHT', owner: 'replica-a', retryAfterMs: 50, runningHere: true });
    expect(error.leaseExpiresAtMs - Date.now()).toBeGreaterThan(50_000);
    expect(error.message).toMatch(/; retry after 50 ms \(a call in this thread is running it: a poll interval, not the lease's remaining time\) \[/);
    expect(error.toJSON()).toMatchObject({ retryAfterMs: 50, runningHere: true });
    release();
    expect((await first).status).toBe('completed');
  });

  it('a call of this process running the attempt is never overtaken by another call of the same instance, even after its lease', async () => {
    let release!: () => void;
    const gate = new Promise<string>((resolve) => (release = () => resolve('late')));
    const t = setup({ leaseMs: 1, handler: () => gate });
    const first = t.remit({ instanceId: 'same' }).start(t.wf, { n: 0 }, { runId: 'r' });
    while (t.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setTimeout(resolve, 5)); // attempt 1's 1 ms lease has expired
    const second = await t.remit({ instanceId: 'same' }).continueRun('r').catch((e) => e);
    expect(second).toBeInstanceOf(EffectInFlightError);
    expect(second).toMatchObject({ owner: 'same', attempt: 1 });
    release();
    expect((await first).status).toBe('completed');
    expect(t.calls).toEqual(['r/send/1#1']);
  });

  it('a call of the same instance that meets another call claiming the first attempt is told attempt 1, its seq and the lease being taken', async () => {
    const { hooks: hold, paused: atClaim, release } = pauseAt('append.before', (info) => info.kinds?.includes('EFFECT_ATTEMPT') === true);
    const t = setup();
    const first = t.remit({ instanceId: 'same' }, hold).start(t.wf, { n: 0 }, { runId: 'r' });
    await atClaim; // RUN_STARTED is durable; the intent and attempt 1 are being appended
    const before = Date.now();
    const second = await t.remit({ instanceId: 'same' }).continueRun('r').catch((e) => e);
    expect(second).toBeInstanceOf(EffectInFlightError);
    expect(second).toMatchObject({ runId: 'r', seq: 2, node: 'send', key: 'r/send/1', attempt: 1, owner: 'same', retryAfterMs: 50 });
    expect(second.leaseExpiresAtMs).toBeGreaterThanOrEqual(before + 30_000);
    expect(second.message).toMatch(/^attempt 1 of effect r\/send\/1 is in flight/);
    release();
    expect((await first).status).toBe('completed');
    expect(t.calls).toEqual(['r/send/1#1']);
  });

  it('a thrown handler releases its attempt: any instance claims the next one at once', async () => {
    let fail = true;
    const t = setup({ handler: async () => { if (fail) throw new Error('provider down'); return 'ok'; } });
    await expect(t.remit({ instanceId: 'a' }).start(t.wf, { n: 0 }, { runId: 'r' })).rejects.toBeInstanceOf(HandlerThrewError);
    const kinds = logFacts('r', await t.store().readLog('r')).records.map((r) => r.kind);
    expect(kinds).toEqual([RecordKind.RUN_STARTED, RecordKind.EFFECT_INTENT, RecordKind.EFFECT_ATTEMPT, RecordKind.EFFECT_RELEASED]);
    fail = false;
    expect((await t.remit({ instanceId: 'b' }).continueRun('r')).status).toBe('completed');
    expect(t.calls).toEqual(['r/send/1#1', 'r/send/1#2']);
  });

  it('a store failure on the attempt append calls no handler; the same instance takes the attempt over next time', async () => {
    const t = setup();
    const failAfterCommit: SequencerHooks = { at(point, info) { if (point === 'append.after' && info.kinds?.includes('EFFECT_ATTEMPT')) throw new Error('connection lost after COMMIT'); } };
    await expect(t.remit({ instanceId: 'a' }, failAfterCommit).start(t.wf, { n: 0 }, { runId: 'r' })).rejects.toThrow('connection lost');
    expect(t.calls).toEqual([]);
    expect((await t.remit({ instanceId: 'a' }).continueRun('r')).status).toBe('completed');
    expect(t.calls).toEqual(['r/send/1#2']);
  });

  it('refuses a log stored under another run id (a whole log copied: its links hold) with RUN_ID_MISMATCH', async () => {
    const t = setup();
    await t.remit({ instanceId: 'a' }).start(t.wf, { n: 0 }, { runId: 'original' });
    const store = t.store();
    for (const r of await store.readRecords('original')) await store.append('copy', r.seq, [r.bytes]);
    const error = await t.remit({ instanceId: 'a' }).status('copy').catch((e) => e);
    expect(error).toBeInstanceOf(LogCorruptError);
    expect(error).toMatchObject({ runId: 'copy', seq: 0, offset: 0 });
    expect(error.logError).toMatch(/^RUN_ID_MISMATCH/);
    // Every view that reads the whole log agrees: runs, inspect, scrub and fork.
    const remit = t.remit({ instanceId: 'a' });
    expect((await remit.runs()).find((r) => r.runId === 'copy')).toMatchObject({ status: 'damaged', damage: { code: 'RUN_ID_MISMATCH', seq: 0 } });
    expect((await remit.inspect('copy')).error).toMatchObject({ seq: 0 });
    expect((await remit.scrub('copy')).damage).toMatchObject({ code: 'RUN_ID_MISMATCH', seq: 0 });
    await expect(remit.fork('copy', 0)).rejects.toMatchObject({ code: 'REMIT_LOG_CORRUPT', seq: 0 });
    expect((await remit.runs()).find((r) => r.runId === 'original')).toMatchObject({ status: 'completed' });
  });

  it('continues a format-1 run in format 2: the format-1 intent gets attempt 1 chained to it', async () => {
    const t = setup();
    const store = t.store();
    const te = new TextEncoder();
    const started = (await (async () => {
      const s = new MemoryStore();
      await new Remit(s, core, [t.wf], undefined, {}, { instanceId: 'x' }).start(t.wf, { n: 0 }, { runId: 'old' }).catch(() => undefined);
      return logFacts('old', await s.readLog('old')).records[0]!;
    })());
    // A format-1 log as an older shell left it: RUN_STARTED and EFFECT_INTENT, crash.
    await store.append('old', 0, [encodeRecord({ ...started, seq: 0 })]);
    await store.append('old', 1, [encodeRecord({ kind: RecordKind.EFFECT_INTENT, seq: 1, node: te.encode('send'), key: te.encode('old:send:1') })]);
    t.calls.length = 0; // the helper run above called the handler too
    const done = await t.remit({ instanceId: 'new' }).continueRun('old');
    expect(done.status).toBe('completed');
    expect(t.calls).toEqual(['old:send:1#1']); // the key recorded in format 1 is kept
    const inspected = await t.remit({ instanceId: 'new' }).inspect('old');
    expect(inspected.records.map((r) => r.format)).toEqual([1, 1, 2, 2, 2, 2]);
  });

  it('checks its options: instanceId, effectLeaseMs, waitForEffectMs, an effect\'s leaseMs', async () => {
    const t = setup();
    expect(() => t.remit({ instanceId: '' })).toThrow(OptionInvalidError);
    expect(() => t.remit({ effectLeaseMs: 0 })).toThrow(OptionInvalidError);
    expect(() => t.remit({ effectLeaseMs: 1.5 })).toThrow(/effectLeaseMs/);
    await expect(t.remit({}).continueRun('r', { waitForEffectMs: -1 })).rejects.toBeInstanceOf(OptionInvalidError);
    await expect(t.remit({}).recoverAll({ waitForEffectMs: Number.NaN })).rejects.toMatchObject({ code: 'REMIT_OPTION_INVALID', option: 'waitForEffectMs' });
    expect(() => workflow({ name: 'w', version: '1', state: State }).effect('e', { run: () => 1, next: END, leaseMs: 0 })).toThrow(DefinitionInvalidError);
    expect(() => workflow({ name: 'w', version: '1', state: State }).effect('e', { run: () => 1, next: END, leaseMs: 0 })).toThrow(/leaseMs of e/);
    // A string is quoted, not shown as the number it looks like.
    expect(() => workflow({ name: 'w', version: '1', state: State }).effect('e', { run: () => 1, next: END, leaseMs: '1000' as never })).toThrow(/got "1000" \[node e, field leaseMs\]$/);
    expect(new Remit(new MemoryStore(), core, [], undefined, {}, { instanceId: 'pod-3' }).instanceId).toBe('pod-3');
  });
});

describe('a lost claim of an effect attempt', () => {
  it('is a ConflictError naming the effect, its key and attempt, saying its handler was not called here', async () => {
    let calls = 0;
    const wf = workflow({ name: 'lost-claim', version: '1', state: z.object({ n: z.number() }) })
      .pure('a', { run: (s) => ({ n: s.n + 1 }), next: 'send' })
      .effect('send', { run: () => ((calls += 1), { ok: true }), next: END })
      .build();
    const backing = new MemoryBacking();
    const stop: SequencerHooks = { at(point) { if (point === 'append.after') throw new Error('stop after the first append'); } };
    await expect(new Remit(new MemoryStore({ backing }), core, [wf], stop).start(wf, { n: 0 }, { runId: 'l' })).rejects.toThrow('stop');
    const winner = new Remit(new MemoryStore({ backing }), core, [wf], undefined, {}, { instanceId: 'winner' });
    // The loser reads the run, then, just before its claim's append, the winner drives the run on.
    const beforeClaim: SequencerHooks = {
      async at(point, info) { if (point === 'append.before' && info.kinds?.includes('EFFECT_ATTEMPT')) await winner.continueRun('l'); },
    };
    const loser = new Remit(new MemoryStore({ backing }), core, [wf], beforeClaim, {}, { instanceId: 'loser' });
    const error = await loser.continueRun('l').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as Error).message).toMatch(/^another sequencer appended first \(expected next seq 1, store is at \d+\); nothing was written: attempt 1 of effect send \(key l\/send\/2\) was not claimed here, so its handler was not called here \[run l, seq 1\]$/);
    expect(calls).toBe(1);
  });
});

describe('a handler that fails after its attempt was taken over', () => {
  it('is HandlerThrewError saying the attempt was taken over and this call\'s outcome is not the run\'s', async () => {
    const wf = workflow({ name: 'taken-over', version: '1', state: z.object({}) })
      .effect('send', {
        leaseMs: 100,
        run: async () => {
          await new Promise((r) => setTimeout(r, 400)); // past the lease
          throw new Error('timed out talking to the mailer');
        },
        next: END,
      })
      .build();
    const backing = new MemoryBacking();
    const slow = new Remit(new MemoryStore({ backing }), core, [wf], undefined, {}, { instanceId: 'slow' });
    const first = slow.start(wf, {}, { runId: 't' }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 200));
    // Another process takes the expired attempt over: its EFFECT_ATTEMPT 2, as its sequencer writes it.
    const raw = new MemoryStore({ backing });
    const te = new TextEncoder();
    const log = await raw.readLog('t');
    const seq = logFacts('t', log).records.length;
    const takeover = encodeRecordV2({
      kind: RecordKind.EFFECT_ATTEMPT, seq, node: te.encode('send'), key: te.encode('t/send/1'), attempt: 2,
      lease: encodeLease({ owner: 'other', leaseUntilMs: Date.now() + 30_000 }),
    }, chainValueBefore(log, log.length));
    expect(await raw.append('t', seq, [takeover])).toMatchObject({ committed: true });
    const error = await first;
    expect(error).toBeInstanceOf(HandlerThrewError);
    expect((error as Error).message).toMatch(/timed out talking to the mailer; nothing was written: another sequencer appended to the run after attempt 1 was claimed here \(its lease ran out and the attempt was taken over\), so this call's outcome is not the run's/);
  });
});
