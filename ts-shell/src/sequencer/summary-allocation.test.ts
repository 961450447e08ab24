/**
 * A summary claiming gigabytes it does not cover (resealed by hand) must not block the run where
 * the host cannot reserve that much: the session reads the whole log instead and answers as it
 * would without the summary. (A fresh process used to lay the records after a stored summary out
 * at their offsets, in a buffer of the length the summary claims; it now holds only record 0 and
 * the records it read, whatever length is claimed: summary-held-bytes.test.ts.)
 * A real process under `ulimit -v`, on the built library (scripts/setup.sh builds dist/ before the
 * tests) and the reference core (the Wasm core reserves more address space than the limit leaves).
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSummary, sealSummary } from './stored-summary.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-summary-alloc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The library and zod by URL: the child's file lies outside the repository.
const library = pathToFileURL(fileURLToPath(new URL('../../dist/index.js', import.meta.url))).href;
const child = join(dir, 'child.mjs');
writeFileSync(child, `
import { createRemit, END, openSqliteStore, workflow } from ${JSON.stringify(library)};
import { z } from ${JSON.stringify(import.meta.resolve('zod'))};
const [mode, file] = process.argv.slice(2);
const State = z.object({ i: z.number().int() });
const wf = workflow({ name: 'alloc', version: '1', state: State })
  .pure('work', { run: (s) => ({ i: s.i + 1 }), next: (s) => (s.i < 80 ? 'work' : 'approve') })
  .interrupt('approve', { resume: z.boolean(), apply: (s) => ({ i: s.i + 1 }), next: END })
  .build();
const remit = await createRemit({ store: openSqliteStore(file), workflows: [wf], core: 'reference', groupPureSteps: false });
try {
  const run = mode === 'start' ? await remit.start(wf, { i: 0 }, { runId: 'r' }) : await remit.status('r');
  process.stdout.write(JSON.stringify(run) + '\\n');
} catch (error) {
  process.stdout.write(JSON.stringify({ error: String(error?.stack ?? error) }) + '\\n');
} finally {
  await remit.close();
}
`);

/** Run the child, under a virtual-memory limit in KiB when given. */
function runChild(mode: 'start' | 'status', file: string, limitKiB?: number): unknown {
  const command = `${limitKiB === undefined ? '' : `ulimit -v ${limitKiB} && `}exec "${process.execPath}" "${child}" ${mode} "${file}"`;
  const out = spawnSync('bash', ['-c', command], {
    encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' },
  });
  expect(out.status, out.stderr).toBe(0);
  return JSON.parse(out.stdout.trim().split('\n').pop()!);
}

describe('a stored summary claiming more log than the host can reserve', () => {
  it('is read past: the run answers from its whole log, under ulimit -v', () => {
    const file = join(dir, 'alloc.db');
    const parked = runChild('start', file) as { status: string };
    expect(parked.status).toBe('parked');
    const db = new Database(file);
    try {
      const row = db.prepare('SELECT record_count, byte_length, snapshot_seq, summary FROM remit_summaries WHERE run_id = ?').get('r') as
        { record_count: number; byte_length: number; snapshot_seq: number; summary: Uint8Array };
      const stored = { recordCount: row.record_count, byteLength: row.byte_length, snapshotSeq: row.snapshot_seq, summary: new Uint8Array(row.summary) };
      const core = openSummary(stored);
      expect(core).not.toBeNull();
      // The same core bytes and counts, but a byte length of almost 4 GiB, resealed: the checksum holds.
      const forged = sealSummary(stored.recordCount, 0xffff_0000, stored.snapshotSeq, core!);
      db.prepare('UPDATE remit_summaries SET byte_length = ?, summary = ? WHERE run_id = ?').run(forged.byteLength, forged.summary, 'r');
    } finally {
      db.close();
    }
    // About 2.9 GiB of address space: the process runs, a 4 GiB buffer cannot be reserved.
    expect(runChild('status', file, 3_000_000)).toEqual(parked);
    expect(runChild('status', file)).toEqual(parked);
  }, 120_000);
});
