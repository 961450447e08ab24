/**
 * A TerminalFailure RUN_FAILED cannot record: fail() and TerminalFailure's constructor check that
 * the code is a non-empty string and the message a string, but a subclass can change either after
 * `super()` (`this.message = reason`). Before, such a failure reached the caller as Node's raw
 * TypeError from the record's encoding, the run could never fail (every continue threw again), an
 * effect's attempt was left unreleased and an interrupt's claim was written first, so the corrected
 * resume was refused as already consumed. Now it is node code's error, as any other throw:
 * HandlerThrewError naming run, seq and node, the attempt released, the interrupt left parked.
 *
 * Also here: the seq a completion's failure names after an effect's result was recorded is the
 * completion's, the same on the call that recorded the result and on every continue after it; and
 * a handler's error whose release could not be recorded says so (the attempt stays claimed), where
 * it said that nothing was recorded.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { EffectInFlightError, HandlerThrewError, StoreError, TerminalFailure } from './errors.js';
import { Remit } from './remit.js';
import { MemoryBacking, MemoryStore } from './store/memory.js';
import type { RecoverySummary, RunStatusHint } from './store/store.js';
import { END, workflow, type Workflow } from './workflow/workflow.js';

const State = z.object({ n: z.number() });

/** Changes its message after the constructor's check: to what `reason` is, text or not. */
class Denied extends TerminalFailure {
  constructor(reason: unknown) {
    super('DENIED', 'denied');
    (this as { message: unknown }).message = reason;
  }
}

/** Its code is a getter that throws. */
class Unreadable extends TerminalFailure {
  constructor() {
    super('X', 'x');
    Object.defineProperty(this, 'failureCode', { get: () => { throw new Error('no code'); } });
  }
}

const bad: Array<[string, () => TerminalFailure]> = [
  ['a message that is an object', () => new Denied({ code: 42 })],
  ['a message that is undefined', () => new Denied(undefined)],
  ['a code getter that throws', () => new Unreadable()],
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function instance(wf: Workflow<any, any, any>) {
  const store = new MemoryStore();
  return { store, remit: new Remit(store, await createCore('reference'), [wf]) };
}

const kinds = (remit: Remit, runId: string) => remit.inspect(runId).then((i) => i.records.map((r) => r.kind));

describe('a TerminalFailure whose code or message is not text', () => {
  for (const [what, failure] of bad) {
    it(`(${what}) from a pure node: HandlerThrewError naming run, seq and node; nothing recorded, the run still running`, async () => {
      let throwIt = true;
      const wf = workflow({ name: 'pure', version: '1', state: State })
        .pure('p', { run: (s) => { if (throwIt) throw failure(); return { n: s.n + 1 }; }, next: END }).build();
      const { remit } = await instance(wf);
      const error = await remit.start(wf, { n: 0 }, { runId: 'r' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HandlerThrewError);
      expect(error).toMatchObject({ runId: 'r', seq: 1, node: 'p' });
      expect((error as Error).message).toMatch(/TerminalFailure whose failureCode or message is not a string.*cannot be recorded as RUN_FAILED/);
      expect(await kinds(remit, 'r')).toEqual(['RUN_STARTED']);
      // Fixed node code continues the run: it was never wedged.
      throwIt = false;
      expect(await remit.continueRun('r')).toMatchObject({ status: 'completed', state: { n: 1 } });
    });

    it(`(${what}) from an effect's handler: the attempt is released, and the next continue calls the handler again`, async () => {
      let calls = 0;
      const wf = workflow({ name: 'effect', version: '1', state: State })
        .effect('e', { run: () => { calls += 1; if (calls === 1) throw failure(); return { ok: true }; }, apply: (s) => ({ n: s.n + 1 }), next: END }).build();
      const { remit } = await instance(wf);
      const error = await remit.start(wf, { n: 0 }, { runId: 'r' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HandlerThrewError);
      expect(error).toMatchObject({ runId: 'r', node: 'e' });
      expect(await kinds(remit, 'r')).toEqual(['RUN_STARTED', 'EFFECT_INTENT', 'EFFECT_ATTEMPT', 'EFFECT_RELEASED']);
      expect(await remit.continueRun('r')).toMatchObject({ status: 'completed', state: { n: 1 } });
      expect(calls).toBe(2);
    });

    it(`(${what}) from an interrupt's apply: the resume is refused before its claim, and a corrected resume is admitted`, async () => {
      const wf = workflow({ name: 'interrupt', version: '1', state: State })
        .interrupt('approve', {
          resume: z.object({ ok: z.boolean() }),
          apply: (s, v) => { if (!v.ok) throw failure(); return { n: s.n + 1 }; },
          next: END,
        }).build();
      const { remit } = await instance(wf);
      const parked = await remit.start(wf, { n: 0 }, { runId: 'r' });
      const id = parked.interrupt!.id;
      const error = await remit.resume('r', id, { ok: false }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HandlerThrewError);
      expect(error).toMatchObject({ runId: 'r', node: 'approve' });
      expect((error as HandlerThrewError).claimSeq).toBeUndefined();
      expect((error as Error).message).toContain('the value was not claimed and the interrupt is still parked');
      expect(await remit.status('r')).toMatchObject({ status: 'parked' });
      expect(await remit.resume('r', id, { ok: true })).toMatchObject({ status: 'completed', state: { n: 1 } });
    });
  }

  // A getter whose answer changes between reads: the failure is read once, and every part of the
  // step (release, record, error) follows that one reading. Reading it at each use had an effect
  // release its attempt and then try RUN_FAILED at the same seq (an InvariantViolation), or record
  // nothing and leave the attempt claimed.
  for (const [order, answers] of [['text first', ['ok', 42]], ['not text first', [42, 'ok']]] as const) {
    it(`a message getter answering ${order}: one reading decides, in an effect's handler and a pure node`, async () => {
      const failure = () => {
        const made = new TerminalFailure('X', 'x');
        let reads = 0;
        Object.defineProperty(made, 'message', { get: () => answers[Math.min(reads++, 1)] });
        return made;
      };
      const textFirst = typeof answers[0] === 'string';
      let calls = 0;
      const effect = workflow({ name: 'changing-effect', version: '1', state: State })
        .effect('e', { run: () => { calls += 1; if (calls === 1) throw failure(); return {}; }, apply: (s) => ({ n: s.n + 1 }), next: END }).build();
      const pure = workflow({ name: 'changing-pure', version: '1', state: State }).pure('p', { run: () => { throw failure(); }, next: END }).build();
      const { remit } = await instance(effect);
      remit.register(pure);
      const fromEffect = await remit.start(effect, { n: 0 }, { runId: 'e' }).catch((e: unknown) => e);
      const fromPure = await remit.start(pure, { n: 0 }, { runId: 'p' }).catch((e: unknown) => e);
      if (textFirst) {
        expect(fromEffect).toMatchObject({ status: 'failed', failure: { code: 'X', message: 'ok' } });
        expect(await kinds(remit, 'e')).toEqual(['RUN_STARTED', 'EFFECT_INTENT', 'EFFECT_ATTEMPT', 'RUN_FAILED']);
        expect(fromPure).toMatchObject({ status: 'failed', failure: { code: 'X', message: 'ok' } });
      } else {
        expect(fromEffect).toBeInstanceOf(HandlerThrewError);
        expect(await kinds(remit, 'e')).toEqual(['RUN_STARTED', 'EFFECT_INTENT', 'EFFECT_ATTEMPT', 'EFFECT_RELEASED']);
        expect(await remit.continueRun('e')).toMatchObject({ status: 'completed' });
        expect(fromPure).toBeInstanceOf(HandlerThrewError);
        expect((fromPure as Error).message).toMatch(/TerminalFailure whose failureCode or message is not a string/);
      }
    });
  }

  it('a subclass that keeps its code and message text still fails the run (RUN_FAILED with them)', async () => {
    class Declined extends TerminalFailure {
      constructor(reason: string) {
        super('DECLINED', 'x');
        this.message = `declined: ${reason}`;
      }
    }
    const wf = workflow({ name: 'kept', version: '1', state: State }).pure('p', { run: () => { throw new Declined('card'); }, next: END }).build();
    const { remit } = await instance(wf);
    expect(await remit.start(wf, { n: 0 }, { runId: 'r' })).toMatchObject({ status: 'failed', failure: { node: 'p', code: 'DECLINED', message: 'declined: card' } });
  });
});

describe("the seq of a completion's failure after an effect's result was recorded", () => {
  it('is the completion\'s, on the call that recorded the result and on a continue', async () => {
    const wf = workflow({ name: 'apply-throws', version: '1', state: z.object({ x: z.number().optional() }) })
      .effect('eff', { run: () => 5, apply: () => { throw new Error('apply boom'); }, next: END }).build();
    const { remit } = await instance(wf);
    const first = await remit.start(wf, {}, { runId: 'r' }).catch((e: unknown) => e);
    const again = await remit.continueRun('r').catch((e: unknown) => e);
    // RUN_STARTED 0, EFFECT_INTENT 1, EFFECT_ATTEMPT 2, EFFECT_DONE 3: the completion's seq is 4.
    expect(await kinds(remit, 'r')).toEqual(['RUN_STARTED', 'EFFECT_INTENT', 'EFFECT_ATTEMPT', 'EFFECT_DONE']);
    expect(first).toBeInstanceOf(HandlerThrewError);
    expect(again).toBeInstanceOf(HandlerThrewError);
    expect(first).toMatchObject({ runId: 'r', seq: 4, node: 'eff' });
    expect(again).toMatchObject({ runId: 'r', seq: 4, node: 'eff' });
  });
});

/** A memory store whose appends fail while `failing` is set (a lost connection, a full disk). */
class FailingStore extends MemoryStore {
  failing = false;
  override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint) {
    if (this.failing) throw new StoreError(this.description, 'append', 'UNAVAILABLE', { runId, seq: expectedSeq }, new Error('connection lost'));
    return super.append(runId, expectedSeq, records, summary, runStatus);
  }
}

describe("a handler's error whose release cannot be recorded", () => {
  it('says the attempt stays claimed until its lease runs out, and another instance is refused until then', async () => {
    const backing = new MemoryBacking();
    const store = new FailingStore({ backing });
    const wf = workflow({ name: 'unreleased', version: '1', state: State })
      .effect('e', { run: () => { store.failing = true; throw new Error('downstream down'); }, apply: (s) => ({ n: s.n + 1 }), next: END }).build();
    const remit = new Remit(store, await createCore('reference'), [wf], undefined, undefined, { instanceId: 'first' });
    const error = await remit.start(wf, { n: 0 }, { runId: 'r' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HandlerThrewError);
    expect((error as Error).message).toMatch(/downstream down; EFFECT_RELEASED could not be recorded \(.*connection lost.*\): attempt 1 stays claimed by this instance until its lease runs out/);
    expect((error as Error).message).not.toContain('nothing was recorded');
    store.failing = false;
    expect(await kinds(remit, 'r')).toEqual(['RUN_STARTED', 'EFFECT_INTENT', 'EFFECT_ATTEMPT']);
    const other = new Remit(new MemoryStore({ backing }), await createCore('reference'), [wf], undefined, undefined, { instanceId: 'second' });
    expect(await other.continueRun('r').catch((e: unknown) => e)).toBeInstanceOf(EffectInFlightError);
  });

  it('whose answer was lost says the release may or may not be recorded (it was, here)', async () => {
    // The store commits the release, then loses its answer, as a broken connection after a commit does.
    class LosingStore extends MemoryStore {
      losing = false;
      override async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint) {
        const outcome = await super.append(runId, expectedSeq, records, summary, runStatus);
        if (this.losing) throw new StoreError(this.description, 'append', 'OUTCOME_UNKNOWN', { runId, seq: expectedSeq }, new Error('connection lost after commit'));
        return outcome;
      }
    }
    const store = new LosingStore();
    const wf = workflow({ name: 'lost-answer', version: '1', state: State })
      .effect('e', { run: () => { store.losing = true; throw new Error('downstream down'); }, apply: (s) => ({ n: s.n + 1 }), next: END }).build();
    const remit = new Remit(store, await createCore('reference'), [wf]);
    const error = await remit.start(wf, { n: 0 }, { runId: 'r' }).catch((e: unknown) => e);
    store.losing = false;
    expect(error).toBeInstanceOf(HandlerThrewError);
    expect((error as Error).message).toMatch(/EFFECT_RELEASED may or may not have been recorded \(.*OUTCOME_UNKNOWN.*status\(\) and inspect\(\) say which\)/);
    expect(await kinds(remit, 'r')).toEqual(['RUN_STARTED', 'EFFECT_INTENT', 'EFFECT_ATTEMPT', 'EFFECT_RELEASED']);
  });
});
