/**
 * SQLite: a run whose listing row was deleted by hand (its records kept). runs() and recoverAll
 * did not see it, and nothing said so. Now `scrub --all` reports it (NOT LISTED, exit 7) and
 * `repair` lists it again: runs() sees it and recoverAll continues it.
 */

import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cliInProcess } from '../../test-support/cli-in-process.js';
import { createCore } from '../core/index.js';
import { Remit } from '../remit.js';
import { END, workflow } from '../workflow/workflow.js';
import { openSqliteStore } from './sqlite.js';

const core = await createCore('reference');
const wf = workflow({ name: 'w', version: '1', state: z.object({ n: z.number() }) })
  .pure('a', { run: (s) => ({ n: s.n + 1 }), next: 'ask' })
  .interrupt('ask', { resume: z.number(), apply: (_s, v) => ({ n: v }), next: END })
  .build();

describe('a SQLite run whose listing row was deleted by hand', () => {
  it('is reported by scrub --all and listed again by repair; then runs() and recoverAll see it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'remit-unlisted-'));
    const file = join(dir, 'remit.db');
    const remit = new Remit(openSqliteStore(file), core, [wf]);
    await remit.start(wf, { n: 0 }, { runId: 'kept' });
    const parked = await remit.start(wf, { n: 0 }, { runId: 'orphan' });
    await remit.close();
    const raw = new Database(file);
    raw.prepare('DELETE FROM remit_runs WHERE run_id = ?').run('orphan');
    raw.close();

    const store = openSqliteStore(file);
    const again = new Remit(store, core, [wf]);
    expect((await again.runs()).map((r) => r.runId)).toEqual(['kept']);
    expect(await store.listUnlistedRuns()).toEqual(['orphan']);
    expect(await again.scrub('orphan')).toMatchObject({ runId: 'orphan', unlisted: true, damage: null });
    expect((await again.scrub('kept')).unlisted).toBeUndefined();
    await again.close();

    const cli = cliInProcess(dir);
    const scrubbed = await cli('--db', file, 'scrub', '--all');
    expect(scrubbed.code).toBe(7);
    expect(scrubbed.stdout).toMatch(/run orphan: NOT LISTED: its records are stored without a listing row .* remit --db[= ].* repair orphan lists it again/);
    expect(scrubbed.stdout).toMatch(/scrubbed 2 runs .*: 1 with problems/);

    const repaired = await cli('--db', file, '--json', 'repair', 'orphan');
    expect(repaired.code).toBe(0);
    expect(repaired.json()).toMatchObject({ runId: 'orphan', relisted: true, removedSeq: null });
    // The note says what changed (the listing) and does not also say that nothing was changed.
    const note = (repaired.json() as { note: string }).note;
    expect(note).toMatch(/^its records were stored without a listing, and it was listed again/);
    expect(note).not.toMatch(/nothing was changed/);
    expect(note).toMatch(/nothing else was changed$/);
    expect((await cli('--db', file, 'scrub', '--all')).code).toBe(0);

    const healed = new Remit(openSqliteStore(file), core, [wf]);
    expect((await healed.runs()).map((r) => r.runId).sort()).toEqual(['kept', 'orphan']);
    expect(await healed.resume('orphan', parked.interrupt!.id, 7)).toMatchObject({ status: 'completed', state: { n: 7 } });
    expect(await openSqliteStore(file).relistRun('orphan')).toBe(false);
    await healed.close();
  });
});
