/**
 * A session whose claim lost the race to another writer: the store refuses the append and reports
 * the winner's records (AppendOutcome.tail), and the session catches up on them alone
 * (RunSession.catchUp): it answers as a fresh session does, hands the core the tail and not the log
 * again, and when driven on writes the very records a fresh process writes. Read from its stored
 * summary and from the whole log, both cores.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { RecordKind, type LogRecord, type RecoveryCore } from '../core/types.js';
import { ConflictError } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { END, workflow, type Workflow } from '../workflow/workflow.js';
import { copyBacking } from '../../test-support/memory-backing.js';
import { countingReads } from '../../test-support/counting-reads.js';
import { RunSession } from './run-session.js';

const CORES = ['reference', 'wasm'] as const;

/** `core` counting the log bytes (the chunks, not the summaries) its feed is handed. */
function countingFeeds(core: RecoveryCore): { core: RecoveryCore; fed: { logBytes: number } } {
  const fed = { logBytes: 0 };
  return {
    fed,
    core: {
      ...core,
      name: core.name,
      feed: (summary, chunk) => {
        fed.logBytes += chunk.length;
        return core.feed(summary, chunk);
      },
    },
  };
}

const Cycled = z.object({ i: z.number().int(), by: z.string() });

/** Pure steps, a park every `every` of them, resumed with a name; ends after `cycles` parks. */
function approvals(every: number, cycles: number): Workflow {
  return workflow({ name: 'approvals', version: '1', state: Cycled })
    .pure('count', { run: (s) => ({ i: s.i + 1 }), next: (s) => (s.i % every === 0 ? 'approve' : 'count') })
    .interrupt('approve', { resume: z.string(), apply: (s, by) => ({ i: s.i + 1, by }), next: (s) => (s.i > every * cycles ? END : 'count') })
    .build();
}

function claimOf(seq: number, id: string, by: string): LogRecord {
  return { kind: RecordKind.RESUME_CLAIMED, seq, interruptId: new TextEncoder().encode(id), value: new TextEncoder().encode(JSON.stringify(by)) };
}

describe.each(CORES)('a session whose claim lost the race to another writer (%s core)', (coreKind) => {
  // The store refuses the claim and reports the winner's records (AppendOutcome.tail); the session
  // feeds the core only those and stands at the store's head, as a fresh read would leave it
  // (catchUp). Remit's resume then refuses (the core names the winner); the session itself must
  // answer as a fresh one does, feed the core the tail alone, and write the records a fresh
  // session writes when driven on.
  it.each(['from its stored summary', 'from the whole log'] as const)('read %s: catches up on the tail alone and goes on as a fresh session would', async (how) => {
    const base = await createCore(coreKind);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 34, max: 90 }), fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }), async (every, winnerBy, loserBy) => {
        const wf = approvals(every, 4);
        const backing = new MemoryBacking();
        const winner = new Remit(new MemoryStore({ backing }), base, [wf]);
        const parked = await winner.start(wf, { i: 0, by: '' }, { runId: 'r' });
        if (parked.status !== 'parked') throw new Error(parked.status);
        expect(backing.runs.get('r')!.summary).toBeDefined();

        // The loser reads the parked run; the winner claims it and drives on to the next park.
        const { core, fed } = countingFeeds(base);
        const reads = countingReads(new MemoryStore({ backing }));
        const loser = await RunSession.open(new Remit(reads.store, core, [wf]), 'r', { wholeLog: how === 'from the whole log' });
        expect(loser.result(loser.recover())).toEqual(parked);
        // Read as asked: from the summary, the records after it alone; else every record.
        if (how === 'from its stored summary') expect(reads.count.records).toBeLessThan(parked.headSeq + 1);
        else expect(reads.count.records).toBe(parked.headSeq + 1);
        const next = await winner.resume('r', parked.interrupt.id, winnerBy);
        if (next.status !== 'parked') throw new Error(next.status);
        const rows = backing.runs.get('r')!.records;
        const tailBytes = rows.slice(parked.headSeq + 1).reduce((n, r) => n + r.bytes.length, 0);

        fed.logBytes = 0;
        await expect(loser.append(parked.headSeq + 1, [claimOf(parked.headSeq + 1, parked.interrupt.id, loserBy)], 'approve')).rejects.toThrow(ConflictError);
        // Caught up, not left to be read again: it answers as a fresh session does, having fed
        // the core the winner's records alone (with the summary it holds), not the log again.
        expect(loser.needsReload).toBe(false);
        const fresh = await RunSession.open(new Remit(new MemoryStore({ backing }), base, [wf]), 'r');
        expect(loser.result(loser.recover())).toEqual(next);
        expect(fresh.result(fresh.recover())).toEqual(next);
        expect(fed.logBytes).toBe(tailBytes);

        // Driven on from there: the very records a fresh process's resume writes.
        const control = copyBacking(backing);
        const expected = await new Remit(new MemoryStore({ backing: control }), base, [wf]).resume('r', next.interrupt.id, loserBy);
        await loser.append(next.headSeq + 1, [claimOf(next.headSeq + 1, next.interrupt.id, loserBy)], 'approve');
        expect(await loser.drive()).toEqual(expected);
        const hex = (b: MemoryBacking) => b.runs.get('r')!.records.map((r) => Buffer.from(r.bytes).toString('hex'));
        expect(hex(backing)).toEqual(hex(control));
      }),
      { numRuns: 8 },
    );
  }, 60_000);
});
