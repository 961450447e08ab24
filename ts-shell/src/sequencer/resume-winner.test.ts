/**
 * k resumers of one interrupt, each its own instance and connection on one SQLite file: exactly
 * one claim commits, and its caller must be able to tell that it won even when node code after
 * the claim throws (a later effect's handler, a pure node, an invalid state). Before, that caller
 * got the later node's error with nothing saying its value had been claimed, and a retry of its
 * resume got AlreadyConsumedError naming its own claim as someone else's. Now an error `resume`
 * throws after its own claim committed carries `claimSeq`, and one thrown before a claim does not.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AlreadyConsumedError, HandlerThrewError, RemitError, StateInvalidError, StoreError } from '../errors.js';
import { createRemit, END, openMemoryStore, openSqliteStore, workflow, type Remit, type RunResult, type Store } from '../index.js';

const root = mkdtempSync(join(tmpdir(), 'remit-resume-winner-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Failure = 'effect' | 'pure' | 'state' | 'apply' | 'none';

/** A workflow whose node after the interrupt fails the way `failure` says, for every caller. */
function approvals(failure: Failure) {
  return workflow({ name: 'approvals', version: '1', state: z.object({ by: z.string().optional(), n: z.number().max(1) }) })
    .interrupt('approve', {
      resume: z.string(),
      apply: (_s, by) => {
        if (failure === 'apply') throw new Error('apply down');
        return { by };
      },
      next: 'notify',
    })
    .effect('notify', {
      run: () => {
        if (failure === 'effect') throw new Error('mailer down');
        return { sent: true };
      },
      next: 'tally',
    })
    .pure('tally', {
      run: (s) => {
        if (failure === 'pure') throw new Error('tally down');
        return { n: failure === 'state' ? s.n + 5 : s.n + 1 };
      },
      next: END,
    })
    .build();
}

type Outcome = { ok: RunResult } | { error: unknown };

async function race(k: number, failure: Failure, caseNo: number): Promise<{ outcomes: Outcome[]; claimSeq: number | undefined; interruptId: string }> {
  const path = join(root, `case-${caseNo}.db`);
  const wf = approvals(failure);
  const open = (i: number) => createRemit({ store: openSqliteStore(path), workflows: [wf], core: 'reference', instanceId: `replica-${i}` });
  const first = await open(0);
  const parked = await first.start(wf, { n: 0 }, { runId: 'r' });
  if (parked.status !== 'parked') throw new Error(`expected a park, got ${parked.status}`);
  const instances: Remit[] = [first];
  for (let i = 1; i < k; i++) instances.push(await open(i));
  const outcomes = await Promise.all(
    instances.map((remit, i) => remit.resume('r', parked.interrupt.id, `approver-${i}`).then((ok) => ({ ok }), (error: unknown) => ({ error }))),
  );
  const inspection = await first.inspect('r');
  const claims = inspection.records.filter((record) => record.kind === 'RESUME_CLAIMED');
  await Promise.all(instances.map((remit) => remit.close()));
  expect(claims.length).toBeLessThanOrEqual(1);
  return { outcomes, claimSeq: claims[0]?.seq, interruptId: parked.interrupt.id };
}

const claimSeqOf = (error: unknown) => (error instanceof RemitError ? error.claimSeq : undefined);

describe('k resumers of one interrupt on one SQLite file', () => {
  let caseNo = 0;

  it('exactly one caller learns that its value was claimed, whether or not node code after the claim throws', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 5 }), fc.constantFrom<Failure>('effect', 'pure', 'state', 'none'), async (k, failure) => {
        const { outcomes, claimSeq } = await race(k, failure, caseNo++);
        expect(claimSeq).toBeDefined();
        const winners = outcomes.filter((o) => 'ok' in o || claimSeqOf(o.error) !== undefined);
        expect(winners).toHaveLength(1);
        const winner = winners[0]!;
        if ('error' in winner) {
          expect(claimSeqOf(winner.error)).toBe(claimSeq);
          expect((winner.error as Error).message).toContain(`claimed at seq ${claimSeq}`);
          if (failure === 'state') expect(winner.error).toBeInstanceOf(StateInvalidError);
          else expect(winner.error).toBeInstanceOf(HandlerThrewError);
        } else expect(failure).toBe('none');
        for (const o of outcomes) {
          if (o === winner) continue;
          expect('error' in o && o.error).toBeInstanceOf(AlreadyConsumedError);
          expect(((o as { error: AlreadyConsumedError }).error).seq).toBe(claimSeq);
        }
      }),
      { numRuns: 12 },
    );
  });

  it('a refusal before any claim (the interrupt apply throws) carries no claimSeq, and nothing is claimed', async () => {
    const { outcomes, claimSeq } = await race(3, 'apply', caseNo++);
    expect(claimSeq).toBeUndefined();
    for (const o of outcomes) {
      expect('error' in o && o.error).toBeInstanceOf(HandlerThrewError);
      expect(claimSeqOf((o as { error: unknown }).error)).toBeUndefined();
    }
  });

  // The shrunk counterexample: two resumers, the effect after the claim throws.
  it('regression: k = 2, the effect after the claim throws', async () => {
    const { outcomes, claimSeq } = await race(2, 'effect', caseNo++);
    const marked = outcomes.filter((o) => 'error' in o && claimSeqOf(o.error) === claimSeq);
    expect(marked).toHaveLength(1);
  });
});

/**
 * A store failing around the claim: the docs say an error without claimSeq claimed nothing. Before,
 * a claim append whose outcome the store could not tell (StoreError OUTCOME_UNKNOWN, committed
 * here) and an error that is not REMIT's after the claim (a custom store's own Error) both reached
 * the caller without claimSeq or any word of the claim, while the claim stood.
 */
describe('a store failing around the claim', () => {
  type Mode = 'none' | 'claim-unknown' | 'plain-after-claim';

  function failingStore(): { store: Store; setMode: (m: Mode) => void } {
    const base = openMemoryStore();
    let mode: Mode = 'none';
    const store: Store = Object.create(base) as Store;
    store.append = async (runId, seq, records, summary, status) => {
      if (mode === 'claim-unknown' && status === 'running') {
        mode = 'none';
        await base.append(runId, seq, records, summary, status);
        throw new StoreError(base.description, 'append', 'OUTCOME_UNKNOWN', { runId, seq }, new Error('connection reset after the commit was sent'));
      }
      if (mode === 'plain-after-claim' && status !== 'running') {
        mode = 'none';
        throw new Error('ECONNRESET');
      }
      return base.append(runId, seq, records, summary, status);
    };
    return { store, setMode: (m) => (mode = m) };
  }

  const flow = workflow({ name: 'approve-then-note', version: '1', state: z.object({ by: z.string().optional(), noted: z.boolean().optional() }) })
    .interrupt('approve', { resume: z.string(), apply: (_s, by) => ({ by }), next: 'note' })
    .pure('note', { run: () => ({ noted: true }), next: END })
    .build();

  it('a claim whose outcome is unknown says so, naming the claim seq and how to find out', async () => {
    const { store, setMode } = failingStore();
    const remit = await createRemit({ store, workflows: [flow], core: 'reference' });
    const parked = await remit.start(flow, {}, { runId: 'u' });
    if (parked.status !== 'parked') throw new Error('expected a park');
    setMode('claim-unknown');
    const error = await remit.resume('u', parked.interrupt.id, 'ann').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'OUTCOME_UNKNOWN', runId: 'u' });
    expect(claimSeqOf(error)).toBeUndefined();
    expect((error as Error).message).toMatch(/whether this resume's claim of approve@1 \(RESUME_CLAIMED at seq 2\) was recorded is unknown: status\(\) tells/);
    // It was recorded here: the retry's refusal names that seq, as the message says it may.
    const retry = await remit.resume('u', parked.interrupt.id, 'ann').catch((e: unknown) => e);
    expect(retry).toMatchObject({ code: 'REMIT_ALREADY_CONSUMED', seq: 2 });
    await remit.close();
  });

  it("an error that is not REMIT's, met after the claim, is given claimSeq and keeps its class and message", async () => {
    const { store, setMode } = failingStore();
    const remit = await createRemit({ store, workflows: [flow], core: 'reference', groupPureSteps: false });
    const parked = await remit.start(flow, {}, { runId: 'p' });
    if (parked.status !== 'parked') throw new Error('expected a park');
    setMode('plain-after-claim');
    const error = await remit.resume('p', parked.interrupt.id, 'ann').catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(RemitError);
    expect((error as Error).message).toBe('ECONNRESET');
    expect((error as { claimSeq?: number }).claimSeq).toBe(2);
    expect(await remit.continueRun('p')).toMatchObject({ status: 'completed', state: { by: 'ann', noted: true } });
    await remit.close();
  });

  it('an error thrown after the claim by a hook (an injected crash at resume.after-claim) carries claimSeq', async () => {
    const hooks = { at: (point: string) => { if (point === 'resume.after-claim') throw new Error('crash after the claim'); } };
    const remit = await createRemit({ store: openMemoryStore(), workflows: [flow], core: 'reference', hooks });
    const parked = await remit.start(flow, {}, { runId: 'h' });
    if (parked.status !== 'parked') throw new Error('expected a park');
    const error = await remit.resume('h', parked.interrupt.id, 'ann').catch((e: unknown) => e);
    expect((error as Error).message).toBe('crash after the claim');
    expect((error as { claimSeq?: number }).claimSeq).toBe(2);
    expect((await remit.status('h')).status).toBe('running');
  });
});

