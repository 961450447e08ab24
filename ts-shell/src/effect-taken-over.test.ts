/**
 * An effect attempt taken over while its handler ran (its lease ran out; another process claimed
 * the next attempt), the handler then returning: the append of its EFFECT_DONE meets a conflict.
 * The ConflictError said "nothing was written" and, as documented, that this sequencer "called no
 * handler": untrue, the outside effect happened. It keeps its class and code, and says so.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { encodeRecordV2 } from './core/codec.js';
import { chainValueBefore } from './core/framing.js';
import { createCore } from './core/index.js';
import { RecordKind } from './core/types.js';
import { ConflictError } from './errors.js';
import type { SequencerHooks } from './faults.js';
import { Remit } from './remit.js';
import { encodeLease } from './sequencer/fence.js';
import { SqliteStore } from './store/sqlite.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const dir = mkdtempSync(join(tmpdir(), 'remit-taken-over-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a handler that returns after its attempt was taken over', () => {
  it('is a ConflictError (same class and code) saying the handler was called and returned, its result not recorded, the attempt taken over', async () => {
    const db = join(dir, 'taken-over.db');
    const calls: number[] = [];
    let release = () => {};
    const returned = new Promise<void>((resolve) => { release = resolve; });
    const wf = workflow({ name: 'mail', version: '1', state: z.object({ sent: z.string().optional() }) })
      .effect('send', {
        leaseMs: 100,
        run: async (_s, { attempt }) => {
          calls.push(attempt);
          await returned; // past the lease: another process takes the attempt over meanwhile
          return 'sent';
        },
        apply: (_s, r: string) => ({ sent: r }),
        next: END,
      })
      .build();
    // Instance A crashes before its first handler call: the run exists, attempt 1 is A's.
    const crashBeforeHandler: SequencerHooks = { at(point) { if (point === 'effect.before-handler') throw new Error('crash'); } };
    const crashed = new Remit(new SqliteStore(db), core, [wf], crashBeforeHandler, {}, { instanceId: 'A' });
    await expect(crashed.start(wf, {}, { runId: 'm1' })).rejects.toThrow('crash');
    await crashed.close();
    // A again: takes its own idle attempt over (attempt 2) and calls the handler, which waits.
    const a = new Remit(new SqliteStore(db), core, [wf], undefined, {}, { instanceId: 'A' });
    const continued = a.continueRun('m1').catch((e: unknown) => e);
    await vi.waitFor(() => expect(calls).toEqual([2]));
    // Another process, its lease of attempt 2 run out, claims attempt 3 (the record its sequencer writes).
    const other = new SqliteStore(db);
    const log = await other.readLog('m1');
    const seq = (await other.readRecords('m1')).length;
    const te = new TextEncoder();
    const takeover = encodeRecordV2({
      kind: RecordKind.EFFECT_ATTEMPT, seq, node: te.encode('send'), key: te.encode('m1/send/1'), attempt: 3,
      lease: encodeLease({ owner: 'B', leaseUntilMs: Date.now() + 30_000 }),
    }, chainValueBefore(log, log.length));
    expect(await other.append('m1', seq, [takeover])).toMatchObject({ committed: true });
    release();
    const error = await continued;
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: 'REMIT_CONFLICT', runId: 'm1', seq, node: 'send', storeNextSeq: seq + 1 });
    const message = (error as Error).message;
    expect(message).toMatch(/^another sequencer appended first \(expected next seq \d+, store is at \d+\); the handler of effect send had been called here and had returned \(attempt 2, key m1\/send\/1: the outside effect happened\), and its result was not recorded/);
    expect(message).toMatch(/the attempt's lease ran out and another sequencer took it over, so this call's outcome is not the run's/);
    expect(message).not.toContain('; nothing was written');
    // Nothing of A's outcome was written: attempt 3 is the log's last record.
    expect((await other.readRecords('m1')).length).toBe(seq + 1);
    expect(calls).toEqual([2]);
    await a.close();
    await other.close();
  });
});
