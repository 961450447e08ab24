/**
 * The clocks an effect's lease is stamped and judged by, when they give something that is not a
 * time: a stubbed Date.now (sinon's `stub(Date, 'now')` answers undefined) made a lease stored as
 * `"leaseUntilMs": null`, which every other instance took over at once, its handler still running;
 * the store's default clock, Date.now captured when it opened, was not checked and did not follow a
 * test's fake time; a lease stamped by a clock a year ahead wedged the attempt with an error that
 * did not say why; a lease past a Date's range made the refusal a bare RangeError.
 */

import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { decodeRecordAt, encodeRecordV2, chainOf } from './core/codec.js';
import { chainValueBefore } from './core/framing.js';
import { createCore } from './core/index.js';
import { RecordKind } from './core/types.js';
import { EffectInFlightError, OptionInvalidError } from './errors.js';
import type { SequencerHooks } from './faults.js';
import { inFlightAdvice } from './cli/main.js';
import { createRemit, Remit } from './remit.js';
import { encodeLease } from './sequencer/fence.js';
import { MemoryBacking, MemoryStore, openMemoryStore } from './store/memory.js';
import type { Store } from './store/store.js';
import { END, MAX_LEASE_MS, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const realNow = Date.now.bind(Date);
const YEAR_MS = 365 * 86_400_000;

/** Releases of handlers still held: a failed test must not leave a call registered for the next one. */
const held: Array<() => void> = [];

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  for (const release of held.splice(0)) release();
});

/** A workflow whose one effect records its calls; its first call, while `hold()` holds, waits for `release()`. */
function mailer() {
  const calls: string[] = [];
  let gate: Promise<void> | null = null;
  let open = () => {};
  const wf = workflow({ name: 'mail', version: '1', state: z.object({ sent: z.string().optional() }) })
    .effect('send', {
      run: async (_s, { idempotencyKey, attempt }) => {
        calls.push(`${idempotencyKey}#${attempt}`);
        if (gate !== null && calls.length === 1) await gate;
        return 'ok';
      },
      apply: (_s, r: string) => ({ sent: r }),
      next: END,
    })
    .build();
  const hold = () => {
    gate = new Promise<void>((resolve) => { open = resolve; });
    held.push(open);
  };
  const release = () => {
    gate = null;
    open();
  };
  return { wf, calls, hold, release };
}

/** Records the log holds of `kind`. */
async function recordsOf(store: Store, runId: string, kind: RecordKind): Promise<number> {
  const log = await store.readLog(runId);
  let count = 0;
  for (let offset = 0; offset < log.length;) {
    const step = decodeRecordAt(log, offset);
    if (step.outcome !== 'record') break;
    if (step.record.kind === kind) count++;
    offset = step.end;
  }
  return count;
}

/** A crash right after the intent and attempt 1 are durable: the attempt stays claimed by its owner. */
const crashAfterAttempt: SequencerHooks = {
  at(point, info) {
    if (point === 'append.after' && info.kinds?.includes('EFFECT_ATTEMPT')) throw new Error('crash');
  },
};

describe('a lease clock that gives no time', () => {
  for (const reading of [undefined, Number.POSITIVE_INFINITY, Number.NaN, '1700000000000', 8.64e15]) {
    it(`Date.now answering ${String(reading)}: the claim is refused naming the clock, nothing written, no handler called; the run goes on once the clock is right`, async () => {
      const t = mailer();
      // The store keeps a clock of its own: what is refused here is the lease's reading.
      const store = openMemoryStore({ clock: () => realNow() });
      const a = await createRemit({ store, workflows: [t.wf], core, instanceId: 'A' });
      vi.spyOn(Date, 'now').mockReturnValue(reading as number);
      const error = await a.start(t.wf, {}, { runId: 'r' }).catch((e: unknown) => e);
      vi.restoreAllMocks();
      expect(error).toBeInstanceOf(OptionInvalidError);
      expect(error).toMatchObject({ code: 'REMIT_OPTION_INVALID', option: 'now', runId: 'r', node: 'send' });
      expect((error as Error).message).toMatch(/not a number of milliseconds since the epoch.*no handler was called and nothing was written/);
      expect(t.calls).toEqual([]);
      expect(await recordsOf(store, 'r', RecordKind.EFFECT_ATTEMPT)).toBe(0);
      const b = await createRemit({ store, workflows: [t.wf], core, instanceId: 'B' });
      expect((await b.continueRun('r')).status).toBe('completed');
      expect(t.calls).toEqual(['r/send/1#1']);
    });
  }

  // The reviewer's case: A's handler runs, B of the same thread continues the run. An attempt whose
  // lease is unreadable (written by another program or an older version) names no owner, and the
  // registry of running calls was not consulted for it: B took it over and called the handler again.
  it('an attempt with an unreadable lease that a call of this thread is running is not taken over by another instance of the thread', async () => {
    const t = mailer();
    const backing = new MemoryBacking();
    const store = leaseRewritingStore(new MemoryStore({ backing }), '{"owner":"A","leaseUntilMs":null}');
    const a = await createRemit({ store, workflows: [t.wf], core, instanceId: 'A' });
    t.hold();
    const running = a.start(t.wf, {}, { runId: 'r' }).catch((e: unknown) => e);
    await vi.waitFor(() => expect(t.calls).toHaveLength(1));
    const b = await createRemit({ store: new MemoryStore({ backing }), workflows: [t.wf], core, instanceId: 'B' });
    const error = await b.continueRun('r').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EffectInFlightError);
    expect(error).toMatchObject({ runningHere: true, owner: '', attempt: 1 });
    expect(t.calls).toEqual(['r/send/1#1']);
    t.release();
    await running;
    expect(t.calls).toEqual(['r/send/1#1']);
  });
});

/** `inner`, with every EFFECT_ATTEMPT appended carrying `lease` instead (re-encoded, so that its checksum and the chain hold). */
function leaseRewritingStore(inner: MemoryStore, lease: string): Store {
  const append: Store['append'] = async (runId, expectedSeq, records, summary, runStatus) => {
    const stored = await inner.readLog(runId);
    let chain = chainValueBefore(stored, stored.length);
    const rewritten = records.map((bytes) => {
      const step = decodeRecordAt(bytes, 0);
      if (step.outcome !== 'record') throw new Error('a record the sequencer wrote did not decode');
      const record = step.record.kind === RecordKind.EFFECT_ATTEMPT ? { ...step.record, lease: new TextEncoder().encode(lease) } : step.record;
      const out = encodeRecordV2(record, chain);
      chain = chainOf(out);
      return out;
    });
    return inner.append(runId, expectedSeq, rewritten, summary, runStatus);
  };
  return new Proxy(inner, {
    get(target, property) {
      if (property === 'append') return append;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as unknown as Store;
}

describe("the store's default clock", () => {
  it('reads Date.now at each call: time faked after the store opened is the time it stores', async () => {
    const t = mailer();
    const store = openMemoryStore();
    const remit = await createRemit({ store, workflows: [t.wf], core });
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2001-02-03T04:05:06.000Z') });
    await remit.start(t.wf, {}, { runId: 'r' });
    expect(await remit.runs()).toEqual([expect.objectContaining({ runId: 'r', createdAtMs: Date.parse('2001-02-03T04:05:06.000Z') })]);
  });

  it('is checked as a given clock is: a stub of Date.now answering undefined is refused naming the clock, nothing written', async () => {
    const t = mailer();
    const store = openMemoryStore();
    const remit = await createRemit({ store, workflows: [t.wf], core });
    vi.spyOn(Date, 'now').mockReturnValue(undefined as unknown as number);
    const error = await remit.start(t.wf, {}, { runId: 'r' }).catch((e: unknown) => e);
    vi.restoreAllMocks();
    expect(error).toBeInstanceOf(OptionInvalidError);
    expect(error).toMatchObject({ option: 'clock' });
    expect((error as Error).message).toMatch(/clock \(not given: Date\.now\) returned something that is not a number of milliseconds/);
    expect(await store.listRuns()).toEqual([]);
    expect(await store.readLog('r')).toHaveLength(0);
  });
});

describe('a lease stamped by a clock far ahead of this one', () => {
  /** Owner A, its clock a year ahead, claimed attempt 1 and crashed. */
  async function claimedByFastClock() {
    const t = mailer();
    const backing = new MemoryBacking();
    const a = new Remit(new MemoryStore({ backing }), core, [t.wf], crashAfterAttempt, {}, { instanceId: 'A', now: () => Date.now() + YEAR_MS });
    await expect(a.start(t.wf, {}, { runId: 'r' })).rejects.toThrow('crash');
    return { t, backing };
  }

  it('is not taken over; the error says the lease ends past the longest lease, why, and that continuing under the owner\'s id takes it over', async () => {
    const { t, backing } = await claimedByFastClock();
    const b = await createRemit({ store: new MemoryStore({ backing }), workflows: [t.wf], core, instanceId: 'B' });
    const error = await b.continueRun('r').catch((e: unknown) => e) as EffectInFlightError;
    expect(error).toBeInstanceOf(EffectInFlightError);
    expect(error.retryAfterMs).toBeGreaterThan(MAX_LEASE_MS);
    expect(error.message).toMatch(new RegExp(`that lease ends more than the longest lease \\(${MAX_LEASE_MS} ms, a day\\) and 5 minutes after this instance's clock: the owner's clock was ahead of this one's when it claimed the attempt, or this one is behind`));
    expect(error.message).toMatch(/If its owner A crashed, continue under its instance id .* which takes its attempts over at once/);
    expect(t.calls).toEqual([]);
    // As the message says: the owner's id takes the attempt over at once.
    const again = await createRemit({ store: new MemoryStore({ backing }), workflows: [t.wf], core, instanceId: 'A' });
    expect((await again.continueRun('r')).status).toBe('completed');
    expect(t.calls).toEqual(['r/send/1#2']);
  });

  it("the CLI's advice does not claim the longest --wait reaches the lease's end", async () => {
    const { t, backing } = await claimedByFastClock();
    const b = await createRemit({ store: new MemoryStore({ backing }), workflows: [t.wf], core, instanceId: 'B' });
    const error = await b.continueRun('r').catch((e: unknown) => e) as EffectInFlightError;
    const advice = inFlightAdvice(error);
    expect(advice).toMatch(/--wait 86400000 r` waits up to 86400000 ms, the longest --wait; its lease runs out later than that \(in \d+ ms by this host's clock: the owner's clock was ahead of this one, or this one is behind\)/);
    expect(advice).not.toMatch(/until its lease runs out/);
    expect(advice).toMatch(/--instance-id=A r` takes its attempts over at once/);
  });

  it('a lease within the longest lease says nothing of clocks', async () => {
    const t = mailer();
    const backing = new MemoryBacking();
    const a = new Remit(new MemoryStore({ backing }), core, [t.wf], crashAfterAttempt, {}, { instanceId: 'A', effectLeaseMs: MAX_LEASE_MS });
    await expect(a.start(t.wf, {}, { runId: 'r' })).rejects.toThrow('crash');
    const b = await createRemit({ store: new MemoryStore({ backing }), workflows: [t.wf], core, instanceId: 'B' });
    const error = await b.continueRun('r').catch((e: unknown) => e) as EffectInFlightError;
    expect(error).toBeInstanceOf(EffectInFlightError);
    expect(error.message).not.toMatch(/longest lease/);
    expect(inFlightAdvice(error)).toMatch(/until its lease runs out/);
  });
});

describe('a stored lease past the range of a Date', () => {
  // Written by another program or an older version: the lease codec accepts any finite time.
  for (const leaseUntilMs of [8.64e15 + 1, 1e300]) {
    it(`(${leaseUntilMs}) is refused as in flight, the message showing the number, not a RangeError`, async () => {
      const t = mailer();
      const backing = new MemoryBacking();
      const a = new Remit(new MemoryStore({ backing }), core, [t.wf], crashAfterAttempt, {}, { instanceId: 'A' });
      await expect(a.start(t.wf, {}, { runId: 'r' })).rejects.toThrow('crash');
      // Attempt 2, claimed by another program with that lease.
      const raw = new MemoryStore({ backing });
      const log = await raw.readLog('r');
      const seq = (await raw.readRecords('r')).length;
      const te = new TextEncoder();
      const attempt = encodeRecordV2({
        kind: RecordKind.EFFECT_ATTEMPT, seq, node: te.encode('send'), key: te.encode('r/send/1'), attempt: 2,
        lease: encodeLease({ owner: 'other', leaseUntilMs }),
      }, chainValueBefore(log, log.length));
      expect(await raw.append('r', seq, [attempt])).toMatchObject({ committed: true });
      const b = await createRemit({ store: new MemoryStore({ backing }), workflows: [t.wf], core, instanceId: 'B' });
      const error = await b.continueRun('r').catch((e: unknown) => e) as EffectInFlightError;
      expect(error).toBeInstanceOf(EffectInFlightError);
      expect(error.message).toContain(`lease until ${String(leaseUntilMs)} ms since the epoch, beyond the times a Date can hold`);
      expect(error.leaseExpiresAtMs).toBe(leaseUntilMs);
      expect(t.calls).toEqual([]);
    });
  }
});
