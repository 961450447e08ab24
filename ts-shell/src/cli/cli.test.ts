/**
 * The `remit` command as users run it, in a scratch folder so the default database
 * (./.remit/remit.db) lands there: once as a child process (src/cli/main.ts under tsx; the
 * consumer test runs the built bin from an installed tarball) and in this process for speed.
 * The refund example is the workflow module. Exit codes are part of the interface.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { Remit } from '../remit.js';
import { SqliteStore } from '../store/sqlite.js';
import { END, workflow } from '../workflow/workflow.js';
import { cliInProcess } from '../../test-support/cli-in-process.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const REFUND_MODULE = fileURLToPath(new URL('../../../examples/refund/index.ts', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'remit-cli-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const core = await createCore('wasm').then(() => 'wasm', () => 'reference');

/** The CLI in a child process (slow: tsx starts each time). */
function remitProcess(...args: string[]) {
  const out = spawnSync(process.execPath, ['--conditions=remit-source', '--import', import.meta.resolve('tsx'), MAIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NODE_NO_WARNINGS: '1' }, timeout: 60_000 });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr, json: () => JSON.parse(out.stdout) };
}

/** The same CLI in this process, output captured (fast); the working folder is the scratch one. */
const remit = cliInProcess(cwd);

describe(`remit CLI (${core} core)`, () => {
  it('starts as a process and prints help', () => {
    const help = remitProcess('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: remit/);
  });

  it('prints help, and refuses bad command lines with exit code 2 and a hint', async () => {
    const help = await remit('--help');
    expect(help.code).toBe(0);
    for (const command of ['run', 'resume', 'continue', 'fork', 'inspect', 'runs', 'repair', 'scrub']) expect(help.stdout).toContain(command);
    expect((await remit()).code).toBe(2);
    const noModule = await remit('run');
    expect(noModule.code).toBe(2);
    expect(noModule.stderr).toMatch(/needs your workflows: pass --workflow <module>/);
    const badJson = await remit('run', '--input', '{oops');
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/--input is not valid JSON/);
    const missing = await remit('resume', 'only-run-id');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing required argument/);
    expect((await remit('fork', 'r', 'three')).code).toBe(2);
    expect((await remit('--core', 'quantum', 'runs')).code).toBe(2);
  });

  it('runs, resumes, refuses, forks and inspects with meaningful exit codes', async () => {
    const run = await remit('--workflow', REFUND_MODULE, '--core', core, 'run', '--run-id', 'c1', '--json');
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ runId: 'c1', status: 'parked', interrupt: { id: 'managerApproval@6' } });

    const invalid = await remit('--workflow', REFUND_MODULE, '--core', core, 'resume', 'c1', 'managerApproval@6', '{"approved":"yes"}');
    expect(invalid.code).toBe(5);
    expect(invalid.stderr).toMatch(/REMIT_RESUME_VALUE_INVALID.*field approved/);

    const resumed = await remit('--workflow', REFUND_MODULE, '--core', core, '--json', 'resume', 'c1', 'managerApproval@6', '{"approved":true,"approver":"kim"}');
    expect(resumed.code).toBe(0);
    expect(resumed.json()).toMatchObject({ status: 'completed' });

    const again = await remit('--workflow', REFUND_MODULE, '--core', core, '--json', 'resume', 'c1', 'managerApproval@6', '{"approved":true,"approver":"kim"}');
    expect(again.code).toBe(4);
    expect(again.json()).toMatchObject({ exitCode: 4, error: { code: 'REMIT_ALREADY_CONSUMED', runId: 'c1', seq: 7 } });

    expect((await remit('--workflow', REFUND_MODULE, '--core', core, 'continue', 'c1', '--from', '1')).code).toBe(4);
    expect((await remit('--workflow', REFUND_MODULE, '--core', core, 'inspect', 'missing')).code).toBe(3);

    const inspect = await remit('--workflow', REFUND_MODULE, '--core', core, 'inspect', 'c1');
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toMatch(/EFFECT_INTENT\s+chargeCard .*key c1\/chargeCard\/2/);

    const fork = await remit('--workflow', REFUND_MODULE, '--core', core, '--json', 'fork', 'c1', '8', '--run-id', 'c1-redo', '--continue');
    expect(fork.code).toBe(0);
    expect(fork.json()).toMatchObject({ fork: { runId: 'c1-redo', forkSeq: 9 }, result: { status: 'completed' } });
    // An instance id it cannot use is a usage error naming the option.
    const badId = await remit('--instance-id', 'a\u0001b', '--json', 'runs');
    expect(badId.code).toBe(2);
    expect(badId.json()).toMatchObject({ error: { code: 'REMIT_OPTION_INVALID', option: 'instanceId' } });

    const runs = await remit('--workflow', REFUND_MODULE, '--core', core, '--json', 'runs');
    expect(runs.json().map((r: { runId: string; status: string }) => [r.runId, r.status])).toEqual([['c1', 'completed'], ['c1-redo', 'completed']]);
  });
});

/** A loop of pure steps long enough for the sequencer to store recovery summaries (one append in 32). */
const Counter = z.object({ i: z.number().int() });
const counter = workflow({ name: 'counter', version: '1', state: Counter })
  .pure('tick', { run: (s) => ({ i: s.i + 1 }), next: (s) => (s.i < 80 ? 'tick' : END) })
  .build();

describe('remit scrub', () => {
  const db = join(cwd, 'scrub.db');

  /** Three completed runs written by the library; then one summary row and one record damaged at rest. */
  async function damagedDatabase(): Promise<void> {
    const store = new SqliteStore(db);
    const remit = new Remit(store, await createCore('reference'), [counter], undefined, { groupPureSteps: false });
    for (const runId of ['sound', 'bad-summary', 'bad-record']) expect((await remit.start(counter, { i: 0 }, { runId })).status).toBe('completed');
    expect(await store.readSummary('bad-summary')).not.toBeNull();
    await store.close();
    const raw = new Database(db);
    const summary = raw.prepare('SELECT summary FROM remit_summaries WHERE run_id = ?').get('bad-summary') as { summary: Buffer };
    summary.summary[3]! ^= 0x40;
    raw.prepare('UPDATE remit_summaries SET summary = ? WHERE run_id = ?').run(summary.summary, 'bad-summary');
    const record = raw.prepare('SELECT bytes FROM remit_records WHERE run_id = ? AND seq = 40').get('bad-record') as { bytes: Buffer };
    record.bytes[record.bytes.length >> 1]! ^= 0x10;
    raw.prepare('UPDATE remit_records SET bytes = ? WHERE run_id = ? AND seq = 40').run(record.bytes, 'bad-record');
    raw.close();
  }

  it('finds a summary row and a record damaged at rest, naming run and seq; exit 7, 0 for a sound run', async () => {
    await damagedDatabase();
    const sound = await remit('--db', db, '--json', 'scrub', 'sound');
    expect(sound.code).toBe(0);
    expect(sound.json()).toMatchObject({ runId: 'sound', records: 82, damage: null, summaryAgrees: true });

    const badSummary = await remit('--db', db, 'scrub', 'bad-summary');
    expect(badSummary.code).toBe(7);
    expect(badSummary.stdout).toMatch(/^run bad-summary: SUMMARY DISAGREES: the stored summary \(\d+ records\) is not the one the core computes/);

    const badRecord = await remit('--db', db, '--json', 'scrub', 'bad-record');
    expect(badRecord.code).toBe(7);
    expect(badRecord.json()).toMatchObject({ runId: 'bad-record', damage: { kind: 'corrupt', seq: 40 } });

    const all = await remit('--db', db, '--json', 'scrub', '--all');
    expect(all.code).toBe(7);
    const result = all.json();
    expect(result.runs).toBe(3);
    expect([...result.problems].sort()).toEqual(['bad-record', 'bad-summary']);
    type Report = { runId: string; summaryAgrees: boolean | null; damage: { seq: number } | null };
    const found = (result.reports as Report[]).map((r) => [r.runId, r.summaryAgrees, r.damage?.seq ?? null]);
    expect(found.sort()).toEqual([
      ['bad-record', false, 40],
      ['bad-summary', false, null],
      ['sound', true, null],
    ]);
    const text = await remit('--db', db, 'scrub', '--all');
    expect(text.code).toBe(7);
    expect(text.stdout).toMatch(/run bad-record: DAMAGED at seq 40: BAD_CHECKSUM \(corrupt\): .*backup/);
    expect(text.stdout).toMatch(/run bad-summary: SUMMARY DISAGREES/);
    expect(text.stdout).toMatch(/scrubbed 3 runs in .*scrub\.db: 2 with problems/);
    expect(text.stdout).not.toMatch(/run sound/);
    expect(text.stdout).toMatch(/remit --db=\S+ repair bad-summary deletes it/);

    // repair deletes the disagreeing summary (nothing else); scrub then finds the run sound, and a
    // repair of a sound run changes nothing.
    const log = (await new SqliteStore(db).readLog('bad-summary'));
    const repaired = await remit('--db', db, '--json', 'repair', 'bad-summary');
    expect(repaired.code).toBe(0);
    expect(repaired.json()).toMatchObject({ runId: 'bad-summary', removedSeq: null, summaryRemoved: true });
    expect(await new SqliteStore(db).readLog('bad-summary')).toEqual(log);
    expect((await remit('--db', db, '--json', 'scrub', 'bad-summary')).json()).toMatchObject({ damage: null, summaryRecords: null, summaryAgrees: null });
    expect((await remit('--db', db, '--json', 'repair', 'sound')).json()).toMatchObject({ removedSeq: null, summaryRemoved: false });
    expect((await remit('--db', db, '--json', 'scrub', 'sound')).json()).toMatchObject({ summaryAgrees: true });
  });

  it('a status hint edited by hand: scrub exits 7 naming the run, the stored hint and the log\'s status; runs flags it; repair corrects it', async () => {
    const hinted = join(cwd, 'scrub-hint.db');
    const store = new SqliteStore(hinted);
    let appends = 0;
    const crashing = new Remit(store, await createCore('reference'), [counter], {
      at(point) {
        if (point === 'append.after' && ++appends === 3) throw new Error('the process died');
      },
    }, { groupPureSteps: false });
    await expect(crashing.start(counter, { i: 0 }, { runId: 'interrupted' })).rejects.toThrow('the process died');
    expect((await new Remit(store, await createCore('reference'), [counter]).start(counter, { i: 75 }, { runId: 'finished' })).status).toBe('completed');
    await store.close();
    const raw = new Database(hinted);
    raw.prepare('UPDATE remit_runs SET status = ? WHERE run_id = ?').run('completed', 'interrupted');
    raw.prepare('UPDATE remit_runs SET status = ? WHERE run_id = ?').run('bogus', 'finished');
    raw.close();

    const one = await remit('--db', hinted, 'scrub', 'interrupted');
    expect(one.code).toBe(7);
    expect(one.stdout).toMatch(
      /^run interrupted: STATUS HINT DISAGREES: the store's status hint is completed but the log says running \(recoverAll trusts the hint and never continues the run; [^)]*\): remit --db=\S+ repair interrupted corrects it; 3 records/,
    );
    const json = await remit('--db', hinted, '--json', 'scrub', 'interrupted');
    expect(json.code).toBe(7);
    expect(json.json()).toMatchObject({ runId: 'interrupted', damage: null, logStatus: 'running', statusHint: 'completed', statusHintAgrees: false });
    const all = await remit('--db', hinted, 'scrub', '--all');
    expect(all.code).toBe(7);
    expect(all.stdout).toMatch(/run interrupted: STATUS HINT DISAGREES/);
    expect(all.stdout).toMatch(/run finished: STATUS HINT DISAGREES: the store's status hint is "bogus" \(not a status\) but the log says completed \(recoverAll reads the run and corrects the hint; [^)]*\): remit --db=\S+ repair finished corrects it/);
    expect(all.stdout).toMatch(/scrubbed 2 runs in .*scrub-hint\.db: 2 with problems/);
    const runs = await remit('--db', hinted, 'runs');
    expect(runs.code).toBe(7);
    expect(runs.stdout.split('\n').find((l) => l.startsWith('interrupted'))).toMatch(/status hint completed disagrees with the log \(running\): remit --db=\S+ repair interrupted$/);
    expect(runs.stdout.split('\n').find((l) => l.startsWith('finished'))).toMatch(/status hint "bogus" \(not a status\) disagrees with the log \(completed\): remit --db=\S+ repair finished$/);

    const repaired = await remit('--db', hinted, '--json', 'repair', 'interrupted');
    expect(repaired.code).toBe(0);
    expect(repaired.json()).toMatchObject({ runId: 'interrupted', removedSeq: null, statusHintCorrected: 'running' });
    const text = await remit('--db', hinted, 'repair', 'finished');
    expect(text.stdout).toMatch(/^run finished: the log is not damaged; its status hint "bogus" \(not a status\) disagreed with the log and was corrected to completed/);
    expect((await remit('--db', hinted, 'scrub', '--all')).code).toBe(0);
    expect((await remit('--db', hinted, 'runs')).code).toBe(0);
    expect((await remit('--db', hinted, 'scrub', 'interrupted')).stdout).toMatch(/^run interrupted: ok, 3 records, \d+ bytes, no stored summary, status hint running agrees/);
    const check = new Database(hinted, { readonly: true });
    expect(check.prepare('SELECT run_id, status FROM remit_runs ORDER BY run_id').all()).toEqual([
      { run_id: 'finished', status: 'completed' },
      { run_id: 'interrupted', status: 'running' },
    ]);
    check.close();
  });

  it('--all on a sound database exits 0; a missing run exits 3; a run id with --all, or neither, is a usage error', async () => {
    const clean = join(cwd, 'scrub-clean.db');
    const store = new SqliteStore(clean);
    await new Remit(store, await createCore('reference'), [counter]).start(counter, { i: 70 }, { runId: 'short' });
    await store.close();
    const all = await remit('--db', clean, 'scrub', '--all');
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/scrubbed 1 run in .*: no problems/);
    const missing = await remit('--db', clean, '--json', 'scrub', 'nope');
    expect(missing.code).toBe(3);
    expect(missing.json()).toMatchObject({ error: { code: 'REMIT_RUN_NOT_FOUND', runId: 'nope' } });
    expect((await remit('--db', clean, 'scrub')).code).toBe(2);
    const both = await remit('--db', clean, 'scrub', 'short', '--all');
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/scrub takes a run id or --all/);
  });
});

describe('remit runs in pages', () => {
  it('--limit and --after list every run exactly once, each page saying how to get the next; bad values exit 2 naming the option', async () => {
    const db = join(cwd, 'pages.db');
    const store = new SqliteStore(db);
    const lib = new Remit(store, await createCore('reference'), [counter]);
    const ids = ['p-a', 'p-b', '-p-c', "p 'd'", 'p-e'];
    for (const runId of ids) expect((await lib.start(counter, { i: 78 }, { runId })).status).toBe('completed');
    await lib.close();

    const seen: string[] = [];
    let args = ['--db', db, 'runs', '--limit', '2'];
    for (let page = 0; page < 10; page++) {
      const out = await remit(...args);
      expect(out.code).toBe(0);
      const lines = out.stdout.trim().split('\n');
      const more = lines.find((l) => l.startsWith('more runs may follow: '));
      const json = await remit(...args.slice(0, 2), '--json', ...args.slice(2));
      const rows = json.json() as { runId: string }[];
      seen.push(...rows.map((r) => r.runId));
      // The text page shows the same runs as the JSON one.
      for (const r of rows) expect(lines.some((l) => l.startsWith(r.runId))).toBe(true);
      if (more === undefined) break;
      expect(rows).toHaveLength(2);
      // The suggested command, as a shell would split it (the ids here need at most one quoting).
      const suggested = more.slice('more runs may follow: '.length);
      expect(suggested).toMatch(/^remit --db=\S+ runs --limit 2 /);
      const after = suggested.replace(/^remit --db=\S+ runs --limit 2 /, '');
      args = ['--db', db, 'runs', '--limit', '2', after.startsWith("'") ? after.slice(1, -1).replaceAll("'\\''", "'") : after];
    }
    // Every run once, in the order of the whole listing (creation time, then id).
    const whole = (await remit('--db', db, '--json', 'runs')).json() as { runId: string }[];
    expect(seen).toEqual(whole.map((r) => r.runId));
    expect([...seen].sort()).toEqual([...ids].sort());

    const last = seen[seen.length - 1]!;
    const tail = await remit('--db', db, 'runs', `--after=${last}`);
    expect(tail.code).toBe(0);
    expect(tail.stdout.startsWith(`no runs after ${last} in `)).toBe(true);
    for (const [option, value] of [['--limit', '0'], ['--limit', '1.5'], ['--limit', 'ten']]) {
      const bad = await remit('--db', db, 'runs', option!, value!);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(`--limit must be a whole number from 1, got "${value}"`);
    }
    const unknown = await remit('--db', db, 'runs', '--after', 'nobody');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--after must name a listed run (the last run of the previous page), got "nobody"');
  });

  it('--status lists only runs of those statuses, its next-page command keeps it, and a status it does not know exits 2', async () => {
    const db = join(cwd, 'status.db');
    const lib = new Remit(new SqliteStore(db), await createCore('reference'), [counter]);
    for (const runId of ['s-1', 's-2', 's-3']) expect((await lib.start(counter, { i: 78 }, { runId })).status).toBe('completed');
    await lib.close();
    const completed = await remit('--db', db, 'runs', '--status', 'completed', '--limit', '2');
    expect(completed.code).toBe(0);
    expect(completed.stdout).toMatch(/^more runs may follow: remit --db=\S+ runs --limit 2 --status=completed --after=s-2$/m);
    expect(((await remit('--db', db, '--json', 'runs', '--status', 'parked,running')).json() as unknown[])).toEqual([]);
    // Repeated, or with spaces after the commas: the same list.
    expect(((await remit('--db', db, '--json', 'runs', '--status', 'parked', '--status', 'completed')).json() as unknown[])).toHaveLength(3);
    expect(((await remit('--db', db, '--json', 'runs', '--status', 'parked, completed')).json() as unknown[])).toHaveLength(3);
    expect((await remit('--db', db, 'runs', '--status', 'parked')).stdout).toMatch(/^no parked runs in /);
    const bad = await remit('--db', db, 'runs', '--status', 'done');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--status takes statuses separated by commas, each one of running, parked, completed, failed, damaged; got "done"');
  });
});
