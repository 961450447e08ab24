import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRemit, openMemoryStore, openSqliteStore, type Store } from 'remit';
import { createCore, decodeRecordAt, RecordKind } from 'remit/core';
import { claimFromHeld, claimOnce, readEveryRacer } from './claim.js';
import { parkedInterruptId, parkedWorkflow } from './remit.js';
import { RESUME_VALUE } from './shapes.js';

const dir = mkdtempSync(path.join(tmpdir(), 'remit-claim-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NODES = 1;
const interruptId = new TextEncoder().encode(parkedInterruptId(NODES));
const value = new TextEncoder().encode(JSON.stringify(RESUME_VALUE));

/** k stores on one backing (SQLite: k connections to one file; memory: k handles on one backing). */
function openStores(kind: 'sqlite' | 'memory', k: number, name: string): Store[] {
  if (kind === 'sqlite') return Array.from({ length: k }, () => openSqliteStore(path.join(dir, `${name}.db`)));
  const first = openMemoryStore();
  return [first, ...Array.from({ length: k - 1 }, () => openMemoryStore({ backing: first.backing }))];
}

/** The kinds of a run's stored records, in order. */
async function kinds(store: Store, runId: string): Promise<number[]> {
  const log = await store.readLog(runId);
  const out: number[] = [];
  for (let offset = 0; offset < log.length; ) {
    const decoded = decodeRecordAt(log, offset);
    if (decoded.outcome !== 'record') throw new Error(`run ${runId}: ${decoded.outcome} at offset ${offset}`);
    out.push(decoded.record.kind);
    offset = decoded.end;
  }
  return out;
}

describe.each(['sqlite', 'memory'] as const)('the gate workloads on %s', (kind) => {
  it.each([1, 2, 8])('with k = %i racers, cold or from the state held, exactly one claim commits; the loser is refused by the core and the run can go on', async (k) => {
    const core = await createCore('wasm');
    const stores = openStores(kind, k, `claim-${k}`);
    const wf = parkedWorkflow(NODES);
    const remit = await createRemit({ store: stores[0]!, workflows: [wf], core });
    const ids = ['cold', 'held'].map((how) => `${how}-${k}`);
    for (const runId of ids) {
      const run = await remit.start(wf, { step: 0, payload: 'p', approved: '', finished: false }, { runId });
      expect(run.interrupt?.id).toBe(parkedInterruptId(NODES));
    }
    const cold = await Promise.all(stores.map((s) => claimOnce(s, core, ids[0]!, interruptId, value)));
    const [held] = await readEveryRacer(stores, core, [ids[1]!]);
    const fromHeld = await Promise.all(stores.map((s, r) => claimFromHeld(s, core, ids[1]!, held![r]!, interruptId, value)));
    for (const [runId, won] of [[ids[0]!, cold], [ids[1]!, fromHeld]] as const) {
      expect(won.filter(Boolean)).toHaveLength(1);
      const stored = await kinds(stores[0]!, runId);
      expect(stored.filter((x) => x === RecordKind.RESUME_CLAIMED)).toHaveLength(1);
      expect(stored.at(-1)).toBe(RecordKind.RESUME_CLAIMED);
      // The library takes the claim as its own would be: the run drives on to its end.
      const done = await remit.continueRun(runId);
      expect(done.status).toBe('completed');
      expect(done.state).toMatchObject({ approved: RESUME_VALUE, finished: true });
    }
    // A claim from a state that is no longer the store's (the run went on) is refused, never appended.
    const late = await claimFromHeld(stores[0]!, core, ids[1]!, held![0]!, interruptId, value);
    expect(late).toBe(false);
    await remit.close();
    for (const s of stores.slice(1)) await s.close();
  });
});
