/**
 * A resume retried after its answer was lost (a client timeout, a connection cut after the claim
 * committed, StoreError OUTCOME_UNKNOWN) is refused with AlreadyConsumedError like any second
 * resume. The caller must be able to tell whether the claim that consumed the interrupt holds its
 * own value: the error carries the recorded value (`claimedValue`) and `sameValue`, whether this
 * call's value, checked and encoded as its claim would have been, is byte for byte the recorded
 * one. Before, it carried neither, and the guide sent the caller to inspect() to find out.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AlreadyConsumedError } from '../errors.js';
import { createRemit, END, openMemoryStore, openSqliteStore, workflow, type Store } from '../index.js';
import { countingReads } from '../../test-support/counting-reads.js';

const root = mkdtempSync(join(tmpdir(), 'remit-resume-retry-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** An interrupt whose schema trims a name and defaults a note (what is recorded is the parsed value). */
const Approval = z.object({ by: z.string().trim(), note: z.string().default('') });

function approvals(resume: z.ZodType = Approval) {
  return workflow({ name: 'approvals', version: '1', state: z.object({ approval: z.unknown().optional(), n: z.number() }) })
    .interrupt('approve', { resume, apply: (_s, approval) => ({ approval }), next: 'count' })
    .pure('count', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n < 60 ? 'count' : 'confirm') })
    .interrupt('confirm', { resume: z.boolean(), apply: () => ({}), next: END })
    .build();
}

async function refusalOf(call: Promise<unknown>): Promise<AlreadyConsumedError> {
  const error = await call.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(AlreadyConsumedError);
  return error as AlreadyConsumedError;
}

describe('a resume refused as already consumed names the value that consumed it', () => {
  it('a retry with the same value is told so; another value is told it was another; the value is as recorded (parsed)', async () => {
    const { store, count: { recordsFrom: readsFrom } } = countingReads(openMemoryStore());
    const wf = approvals();
    const remit = await createRemit({ store, workflows: [wf], core: 'reference' });
    const parked = await remit.start(wf, { n: 0 }, { runId: 'r' });
    if (parked.status !== 'parked') throw new Error(`expected a park, got ${parked.status}`);
    const id = parked.interrupt.id;
    await remit.resume('r', id, { by: ' ann ' });

    const same = await refusalOf(remit.resume('r', id, { by: ' ann ' }));
    expect(same.sameValue).toBe(true);
    expect(same.claimedValue).toEqual({ by: 'ann', note: '' });
    expect(same.message).toContain(`interrupt ${id} was already resumed with this same value`);
    // Already parsed: the same recorded bytes, so the same value.
    expect((await refusalOf(remit.resume('r', id, { by: 'ann', note: '' }))).sameValue).toBe(true);

    const other = await refusalOf(remit.resume('r', id, { by: 'bob' }));
    expect(other.sameValue).toBe(false);
    expect(other.claimedValue).toEqual({ by: 'ann', note: '' });
    expect(other.message).toContain('with a value other than this one');
    // A value the schema refuses is not the claimed one; the refusal is still AlreadyConsumed.
    const invalid = await refusalOf(remit.resume('r', id, { by: 5 }));
    expect(invalid.sameValue).toBe(false);
    expect(invalid.seq).toBe(same.seq);
    // The run went on past snapshots after the claim, so each refusal read the claim from the store.
    expect(readsFrom.filter((from) => from === same.seq)).toHaveLength(4);
    expect(same.toJSON()).toMatchObject({ code: 'REMIT_ALREADY_CONSUMED', sameValue: true, claimedValue: { by: 'ann', note: '' } });
    await remit.close();
  });

  it('a session that holds the claim (no snapshot after it) reads nothing more for it', async () => {
    const { store, count: { recordsFrom: readsFrom } } = countingReads(openMemoryStore());
    const wf = approvals();
    const remit = await createRemit({ store, workflows: [wf], core: 'reference' });
    const parked = await remit.start(wf, { n: 60 }, { runId: 'r' });
    if (parked.status !== 'parked') throw new Error(`expected a park, got ${parked.status}`);
    await remit.resume('r', parked.interrupt.id, { by: 'ann' });
    const refused = await refusalOf(remit.resume('r', parked.interrupt.id, { by: 'ann' }));
    expect(refused.sameValue).toBe(true);
    expect(refused.claimedValue).toEqual({ by: 'ann', note: '' });
    expect(readsFrom).not.toContain(refused.seq);
    await remit.close();
  });

  it('a fresh instance, whose session starts at a head snapshot later than the claim, reads the claim from the store', async () => {
    const path = join(root, 'fresh.db');
    const wf = approvals();
    const first = await createRemit({ store: openSqliteStore(path), workflows: [wf], core: 'reference' });
    const parked = await first.start(wf, { n: 0 }, { runId: 'r' });
    if (parked.status !== 'parked') throw new Error(`expected a park, got ${parked.status}`);
    const after = await first.resume('r', parked.interrupt.id, { by: 'ann' });
    expect(after.status).toBe('parked');
    await first.close();

    const sqlite = openSqliteStore(path);
    let read: { from?: number; limit?: number; records?: number } = {};
    const store: Store = Object.create(sqlite) as Store;
    store.readRecords = async (runId, fromSeq, limit) => {
      const records = await sqlite.readRecords(runId, fromSeq, limit);
      read = { from: fromSeq, limit, records: records.length };
      return records;
    };
    const second = await createRemit({ store, workflows: [wf], core: 'reference' });
    const refused = await refusalOf(second.resume('r', parked.interrupt.id, { by: 'ann' }));
    expect(refused.sameValue).toBe(true);
    expect(refused.claimedValue).toEqual({ by: 'ann', note: '' });
    // The claim alone is read, not the rest of the log after it (62 more records here).
    expect(read).toEqual({ from: refused.seq, limit: 1, records: 1 });
    await second.close();
  });

  it('of k concurrent resumers, each loser is told whether the winner claimed its value', async () => {
    const path = join(root, 'race.db');
    const wf = approvals(z.string());
    const open = (i: number) => createRemit({ store: openSqliteStore(path), workflows: [wf], core: 'reference', instanceId: `replica-${i}` });
    const first = await open(0);
    const parked = await first.start(wf, { n: 0 }, { runId: 'r' });
    if (parked.status !== 'parked') throw new Error(`expected a park, got ${parked.status}`);
    const instances = [first, await open(1), await open(2), await open(3)];
    // Two resumers send "ann", two "bob": exactly one claim wins.
    const values = ['ann', 'ann', 'bob', 'bob'];
    const outcomes = await Promise.all(instances.map((remit, i) => remit.resume('r', parked.interrupt.id, values[i]).then(() => null, (e: unknown) => e)));
    const winner = outcomes.findIndex((o) => o === null);
    expect(outcomes.filter((o) => o === null)).toHaveLength(1);
    for (const [i, o] of outcomes.entries()) {
      if (i === winner) continue;
      expect(o).toBeInstanceOf(AlreadyConsumedError);
      expect((o as AlreadyConsumedError).claimedValue).toBe(values[winner]);
      expect((o as AlreadyConsumedError).sameValue).toBe(values[i] === values[winner]);
    }
    await Promise.all(instances.map((remit) => remit.close()));
  });

  it('property: sameValue is true exactly when the retried value encodes as the claimed one', async () => {
    const value = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 2 }), { maxKeys: 3 }),
    );
    const wf = approvals(z.unknown());
    await fc.assert(
      fc.asyncProperty(value, fc.oneof(value, fc.constant('SAME' as const)), async (claimed, retry) => {
        const remit = await createRemit({ store: openMemoryStore(), workflows: [wf], core: 'reference' });
        const parked = await remit.start(wf, { n: 0 }, { runId: 'p' });
        if (parked.status !== 'parked') throw new Error(`expected a park, got ${parked.status}`);
        await remit.resume('p', parked.interrupt.id, claimed);
        const again = retry === 'SAME' ? structuredClone(claimed) : retry;
        const refused = await refusalOf(remit.resume('p', parked.interrupt.id, again));
        expect(refused.claimedValue).toEqual(claimed);
        expect(refused.sameValue).toBe(JSON.stringify(again) === JSON.stringify(claimed));
        await remit.close();
      }),
      { numRuns: 60 },
    );
  });
});
