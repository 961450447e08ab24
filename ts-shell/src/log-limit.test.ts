/**
 * A run's log may hold at most MAX_LOG_BYTES (its offsets are u32s; past 4 GiB - 1 both cores
 * saturate them and they no longer say where a record is): a step whose records would take the
 * log past it is refused with ValueUnfaithfulError TOO_LARGE naming the run, seq and node, and
 * nothing is written (docs/guide.md, "Limits"). The limit is lowered here (the module that defines
 * it is mocked) so that a test log can reach it; the check is the one a real 4 GiB log meets.
 */

import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';

const LIMIT = vi.hoisted(() => 6000);
vi.mock('./core/framing.js', async (original) => ({ ...(await original<typeof import('./core/framing.js')>()), MAX_LOG_BYTES: LIMIT }));

const { createCore } = await import('./core/index.js');
const { ValueUnfaithfulError } = await import('./errors.js');
const { createRemit } = await import('./remit.js');
const { MemoryStore } = await import('./store/memory.js');
const { END, workflow } = await import('./workflow/workflow.js');
const { checkLogRoom } = await import('./values.js');
const { RecordKind } = await import('./core/types.js');

const core = await createCore();

/** A loop whose every step adds `grow` characters to the state: 300 steps take any of them past LIMIT. */
function growing(grow: number) {
  return workflow({ name: `grow-${grow}`, version: '1', state: z.object({ n: z.number(), pad: z.string() }) })
    .pure('work', { run: (s) => ({ n: s.n + 1, pad: s.pad + 'x'.repeat(grow) }), next: (s) => (s.n < 300 ? 'work' : END) })
    .build();
}

const totalBytes = (log: { bytes: Uint8Array }[]) => log.reduce((sum, r) => sum + r.bytes.length, 0);

describe('the log-size limit', () => {
  it('checkLogRoom: up to the limit fits, one byte more is TOO_LARGE naming the record, run, seq and node', () => {
    const first = { kind: RecordKind.RUN_COMPLETED, seq: 7 } as const;
    expect(() => checkLogRoom(LIMIT - 10, 10, first, { runId: 'r', node: 'n' })).not.toThrow();
    const error = (() => {
      try {
        checkLogRoom(LIMIT - 10, 11, first, { runId: 'r', node: 'n' });
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(ValueUnfaithfulError);
    expect(error).toMatchObject({ reason: 'TOO_LARGE', runId: 'r', seq: 7, node: 'n', value: 'RUN_COMPLETED record' });
  });

  it('a run growing to the limit is refused at the step that would cross it, with or without group commit; nothing is written, and again on every continue', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 400 }), fc.boolean(), async (grow, grouped) => {
        const wf = growing(grow);
        const store = new MemoryStore();
        const remit = await createRemit({ store, workflows: [wf], core, groupPureSteps: grouped });
        const refused = await remit.start(wf, { n: 0, pad: '' }, { runId: 'r' }).then(() => null, (e: unknown) => e);
        expect(refused).toBeInstanceOf(ValueUnfaithfulError);
        expect(refused).toMatchObject({ reason: 'TOO_LARGE', runId: 'r', node: 'work' });
        const log = await store.readRecords('r');
        expect(totalBytes(log)).toBeLessThanOrEqual(LIMIT);
        // The refused step's records are not in the log: its seq is the next one the log would take.
        expect((refused as { seq: number }).seq).toBeGreaterThanOrEqual(log.length);
        expect((await remit.scrub('r')).damage).toBeNull();
        const again = await remit.continueRun('r').then(() => null, (e: unknown) => e);
        expect(again).toMatchObject({ reason: 'TOO_LARGE', runId: 'r' });
        expect(await store.readRecords('r')).toEqual(log);
      }),
      { numRuns: 25 },
    );
  });
});
