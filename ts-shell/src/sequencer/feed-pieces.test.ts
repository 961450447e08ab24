/**
 * feedInPieces / recoverInPieces: a log fed to the core in pieces of any size gives the answer
 * `core.recover` gives the whole log (sound, torn or corrupt, with the offsets of the whole log)
 * and, when it recovers, the summary one feed of the whole log gives. Logs of real runs (pure
 * steps, effects, a park and its resume), cut short or with a byte flipped; piece sizes small
 * enough that records straddle pieces and pieces double until a record fits.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { concatBytes } from '../core/codec.js';
import { createCore } from '../core/index.js';
import { EMPTY_SUMMARY } from '../core/types.js';
import { Remit } from '../remit.js';
import type { RunResult } from './run-result.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow } from '../workflow/workflow.js';
import { EMPTY_SUMMARY_AT, feedInPieces, recoverInPieces } from './feed-pieces.js';

const State = z.object({ i: z.number().int(), note: z.string() });

const mixed = workflow({ name: 'mixed', version: '1', state: State })
  .pure('prepare', { run: (s) => ({ i: s.i + 1, note: 'n'.repeat(300 + s.i) }), next: 'charge' })
  .effect('charge', { run: async (s) => ({ charged: s.i }), apply: (s, r) => ({ i: s.i + 1, note: `charged ${r.charged}` }), next: 'approve' })
  .interrupt('approve', { resume: z.string(), apply: (s, v) => ({ i: s.i + 1, note: v }), next: (s) => (s.i < 12 ? 'prepare' : END) })
  .build();

/** The records of a run parked and resumed a few times, then completed. */
async function realRecords(): Promise<Uint8Array[]> {
  const store = new MemoryStore();
  const remit = new Remit(store, await createCore('reference'), [mixed]);
  let run: RunResult = await remit.start(mixed, { i: 0, note: '' }, { runId: 'r' });
  while (run.status === 'parked') run = await remit.resume('r', run.interrupt.id, `ok ${run.headSeq}`);
  expect(run.status).toBe('completed');
  return (await store.readRecords('r')).map((r) => r.bytes);
}

const records = await realRecords();
const log = concatBytes(records);
/** The offset after each record: ends[i] is where record i + 1 begins. */
const ends = records.map((_, i) => records.slice(0, i + 1).reduce((n, r) => n + r.length, 0));

describe.each(['reference', 'wasm'] as const)('a log fed in pieces (%s core)', (kind) => {
  it('gives recover\'s answer and the whole feed\'s summary, whatever the piece size, cut or flipped byte', async () => {
    const core = await createCore(kind);
    const damage = fc.oneof(
      fc.constant({ tag: 'none' as const }),
      fc.record({ tag: fc.constant('cut' as const), at: fc.integer({ min: 0, max: log.length }) }),
      fc.record({ tag: fc.constant('flip' as const), at: fc.integer({ min: 0, max: log.length - 1 }), bit: fc.integer({ min: 0, max: 7 }) }),
    );
    fc.assert(fc.property(damage, fc.integer({ min: 1, max: 700 }), (d, chunkBytes) => {
      let bytes = log;
      if (d.tag === 'cut') bytes = log.slice(0, d.at);
      if (d.tag === 'flip') (bytes = log.slice())[d.at]! ^= 1 << d.bit;
      expect(recoverInPieces(core, bytes, chunkBytes)).toEqual(core.recover(bytes));
      const fed = feedInPieces(core, EMPTY_SUMMARY_AT, bytes, bytes.length, chunkBytes)!;
      const whole = core.feed(EMPTY_SUMMARY, bytes);
      if (whole.ok && whole.recovery.ok) {
        expect(fed.at.summary).toEqual(whole.summary);
        expect(fed.at.byteLength).toBe(whole.recovery.durableLen);
      }
    }), { numRuns: 300 });
  });

  it('a log held without the bytes between record 0 and a later record gives the whole log\'s answer, fed from a summary past them', async () => {
    // As a session read from a stored summary holds its log: record 0, then the bytes from the
    // head snapshot on; the summary it feeds from ends at or after the snapshot.
    const core = await createCore(kind);
    const boundaries = fc.tuple(fc.integer({ min: 0, max: ends.length - 1 }), fc.integer({ min: 0, max: ends.length - 1 })).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);
    fc.assert(fc.property(boundaries, fc.integer({ min: 1, max: 700 }), ([snapshot, summaryAt], chunkBytes) => {
      const skip = { at: ends[0]!, bytes: ends[snapshot]! - ends[0]! };
      const held = concatBytes([log.subarray(0, skip.at), log.subarray(skip.at + skip.bytes)]);
      const from = feedInPieces(core, EMPTY_SUMMARY_AT, log, ends[summaryAt]!)!.at;
      expect(feedInPieces(core, from, held, log.length, chunkBytes, skip)).toEqual(feedInPieces(core, from, log, log.length, chunkBytes));
    }), { numRuns: 200 });
  });

  it('a feed from a summary that ends inside the bytes not held is refused, not fed the wrong bytes', async () => {
    const core = await createCore(kind);
    // Records 1 to 5 not held; a summary at the end of record 2 lies inside them.
    const skip = { at: ends[0]!, bytes: ends[5]! - ends[0]! };
    const held = concatBytes([log.subarray(0, skip.at), log.subarray(skip.at + skip.bytes)]);
    const inside = feedInPieces(core, EMPTY_SUMMARY_AT, log, ends[2]!)!.at;
    // Past the count of bytes skipped, so a check of the count alone let it through.
    expect(inside.byteLength).toBeGreaterThanOrEqual(skip.bytes);
    expect(() => feedInPieces(core, inside, held, log.length, 1024, skip)).toThrow(/outside the .* bytes held/);
    const atEnd = feedInPieces(core, EMPTY_SUMMARY_AT, log, ends[5]!)!.at;
    expect(feedInPieces(core, atEnd, held, log.length, 1024, skip)).toEqual(feedInPieces(core, atEnd, log, log.length, 1024));
  });

  it('the default pieces of 1 MiB give the same answer on a log that fits in one', async () => {
    const core = await createCore(kind);
    expect(log.length).toBeLessThan(1024 * 1024);
    expect(recoverInPieces(core, log)).toEqual(core.recover(log));
    expect(recoverInPieces(core, new Uint8Array())).toEqual(core.recover(new Uint8Array()));
  });
});
