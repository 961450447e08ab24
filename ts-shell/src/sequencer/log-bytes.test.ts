/**
 * The bytes a run writes are pinned: a set of runs whose states change in every way a delta can
 * describe (a counter, a growing array, nested keys set and deleted, non-ASCII text, a state
 * reordered by its schema, unchanged steps), with and without group commit, hashes to the digest
 * below. The step path is free to compute those bytes however it likes; it may not change them.
 * (The digest was computed by the sequencer before the per-step work was cut, and must only change
 * with a deliberate change of the log format or of the storage policy.)
 */

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow } from '../workflow/workflow.js';

const State = z.object({
  step: z.number().int(),
  text: z.string(),
  items: z.array(z.string()),
  tree: z.record(z.string(), z.object({ n: z.number(), tags: z.array(z.string()).optional() })),
  flag: z.boolean().default(false),
});
type S = z.infer<typeof State>;

const STEPS = 90;

/** One node, many kinds of change: which one depends on the step. */
function change(s: S): Partial<S> {
  const i = s.step + 1;
  const tree = { ...s.tree };
  if (i % 3 === 0) tree[`k${i % 7}`] = { n: i / 4, tags: i % 2 === 0 ? ['even', 'ü'] : [] };
  if (i % 5 === 0) delete tree[`k${(i + 3) % 7}`];
  if (i % 11 === 0) return { step: i };
  return {
    step: i,
    text: i % 4 === 0 ? `${s.text}·${i}` : s.text,
    items: i % 2 === 0 ? [...s.items, `item ${i} — ✓`] : i % 17 === 0 ? s.items.slice(1) : s.items,
    tree,
    ...(i % 13 === 0 ? { flag: !s.flag } : {}),
  };
}

const wf = workflow({ name: 'log-bytes', version: '1', state: State })
  .pure('work', { run: change, next: (s) => (s.step < STEPS ? (s.step % 10 === 9 ? 'same' : 'work') : END) })
  .pure('same', { run: () => ({}), next: 'work' })
  .build();

async function logDigest(groupPureSteps: boolean): Promise<string> {
  const store = new MemoryStore();
  const remit = new Remit(store, await createCore('reference'), [wf], undefined, { groupPureSteps, maxGroupedPureSteps: 16 });
  const hash = createHash('sha256');
  for (const [runId, text] of [['ascii', 'start'], ['unicode', 'naïve ✓ 😀'], ['long', 'x'.repeat(700)]] as const) {
    const run = await remit.start(wf, { step: 0, text, items: [], tree: {} }, { runId });
    expect(run.status).toBe('completed');
    for (const record of await store.readRecords(runId)) hash.update(record.bytes);
  }
  return hash.digest('hex');
}

describe('the bytes of a run', () => {
  it('are the pinned ones, with and without group commit', async () => {
    const grouped = await logDigest(true);
    expect(await logDigest(false)).toBe(grouped);
    // Changed four times since it was first pinned, deliberately, each time by RUN_STARTED's definition
    // descriptor alone (and so the chain of every record after it): format 2 (normalized schemas, the
    // input side and zod notes: workflow/descriptor.ts; with format 1 it was 28cc3514…), then format 3
    // (annotations inside unions, nullables and intersections, recursive $defs by field name; with
    // format 2 it was 92ef3ee2…, and every other record decoded the same under both), then format 4
    // (a default's value left out, `flag`'s here, and no metadata; with format 3 it was dbbb374a…),
    // then format 5 (nodes by name, every check noted, one form of recursion; with format 4 it was 758b86f2…).
    expect(grouped).toBe('75354d942e3477846bd380e58deb4853dff7bd546769f0eb00b830a61dcd80dd');
  });
});
