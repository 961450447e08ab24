/**
 * A run whose stored summary an earlier release wrote (version 1 of the summary encoding, before
 * reserved interrupt ids: equivalence/summary-v1.json holds such summaries, made by that release's
 * core) is still read from it after the upgrade: a fresh process reads record 0 and the records
 * from the summary's snapshot on, not the whole log, and `scrub` finds the summary agrees with the
 * records. Before, every such summary was refused: each open of the run read its whole log, for
 * good when the run had ended, and `scrub --all` reported every summarised run as disagreeing.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeLog } from '../core/codec.js';
import { createCore } from '../core/index.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { SqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/store.js';
import { sealSummary } from './stored-summary.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-summary-v1-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fixture = JSON.parse(readFileSync(new URL('../../../equivalence/summary-v1.json', import.meta.url), 'utf8')) as {
  logs: Array<{ name: string; log: string; summaries: string[] }>;
};
const bytes = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));

/** `store` counting the records its reads return. */
function counted(store: Store): { store: Store; rows: { read: number } } {
  const rows = { read: 0 };
  const view = Object.create(store) as Store;
  view.readRecords = async (runId, fromSeq, limit) => {
    const found = await store.readRecords(runId, fromSeq, limit);
    rows.read += found.length;
    return found;
  };
  if (store.readRun !== undefined) {
    const readRun = store.readRun.bind(store);
    view.readRun = async (runId) => {
      const read = await readRun(runId);
      rows.read += read.records.length + (read.found === null ? 0 : 1);
      return read;
    };
  }
  return { store: view, rows };
}

describe.each(['reference', 'wasm'] as const)('a version-1 summary after the upgrade (%s core)', (coreKind) => {
  it.each(['memory', 'sqlite'] as const)('is read, not the whole log; scrub finds it agrees (%s store)', async (storeKind) => {
    const core = await createCore(coreKind);
    for (const { name, log: logHex, summaries } of fixture.logs) {
      // Each log is a run 'run-1' (its RUN_STARTED's id): one store each.
      const backing = new MemoryBacking();
      const path = join(dir, `${coreKind}-${name}.db`);
      const open = (): Store => (storeKind === 'memory' ? new MemoryStore({ backing }) : new SqliteStore(path));
      const log = bytes(logHex);
      const decoded = decodeLog(log);
      const rows = decoded.offsets.map((at, i) => log.subarray(at, decoded.offsets[i + 1] ?? log.length));
      const recovery = core.recover(log);
      if (!recovery.ok) throw new Error(`${name} does not recover`);
      // Stored as the earlier release stored it: the records, and its summary of all of them.
      const writer = open();
      await writer.append(RUN, 0, rows, sealSummary(rows.length, log.length, recovery.snapshotSeq, bytes(summaries[summaries.length - 1]!)));
      await writer.close();

      const fresh = counted(open());
      const remit = new Remit(fresh.store, core, []);
      const status = await remit.status(RUN);
      expect(status.status).toBe(STATUS[name]);
      expect(fresh.rows.read, `${name}: rows read by a fresh status()`).toBeLessThan(rows.length);
      const scrub = await remit.scrub(RUN);
      expect(scrub.damage).toBeNull();
      expect(scrub.summaryAgrees).toBe(true);
      await remit.close();
    }
  });
});

const RUN = 'run-1';
const STATUS: Record<string, string> = { completed: 'completed', parked: 'parked', failed: 'failed' };
