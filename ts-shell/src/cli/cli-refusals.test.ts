/**
 * What the `remit` command refuses, and how it says so, for the mistakes and damage an operator
 * meets: a file that is not a REMIT database (left byte-identical), damage that only a listing
 * sees (a renumbered record, a run listed without records), a workflow module that does not load,
 * command-line errors under --json, suggested commands with awkward run ids, and output cut short
 * by its reader.
 */

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { displayText } from '../display.js';
import { shellWord, suggestCommand } from '../errors.js';
import { Remit } from '../remit.js';
import { SqliteStore } from '../store/sqlite.js';
import { END, workflow } from '../workflow/workflow.js';
import { cliInProcess } from '../../test-support/cli-in-process.js';
import { counter } from '../../test-support/counter-workflow.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const REFUND_MODULE = fileURLToPath(new URL('../../../examples/refund/index.ts', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'remit-cli-refusals-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const remit = cliInProcess(cwd);
const tsx = ['--conditions=remit-source', '--import', import.meta.resolve('tsx')];

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('a file that is not a REMIT database', () => {
  it('is refused by every command that only reads (exit 3), and not a byte of it changes', async () => {
    const foreign = join(cwd, 'foreign.db');
    const other = new Database(foreign);
    other.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, \'ada\'); PRAGMA user_version = 7');
    other.close();
    const empty = join(cwd, 'empty.db');
    writeFileSync(empty, '');
    // Not SQLite at all (a mistyped --db naming a text file): the same refusal, not a store error (exit 8).
    const text = join(cwd, 'notes.txt');
    writeFileSync(text, 'not a database\n'.repeat(200));
    for (const file of [foreign, empty, text]) {
      const before = digest(file);
      for (const args of [['inspect', 'x'], ['runs'], ['scrub', '--all'], ['repair', 'x'], ['--json', 'runs']]) {
        const result = await remit('--db', file, ...args);
        expect(result.code, `${file} ${args.join(' ')}`).toBe(3);
        expect(result.stderr + result.stdout).toMatch(/not a REMIT database/);
      }
      expect(digest(file)).toBe(before);
      expect(existsSync(`${file}-wal`)).toBe(false);
    }
    const journal = new Database(foreign, { readonly: true });
    expect(journal.pragma('journal_mode', { simple: true })).toBe('delete');
    journal.close();
  });

  it('`run` adds its tables to an empty file, but refuses a file that is not SQLite at all (SQLITE_NOTADB, exit 8) without changing a byte, as docs/guide.md says', async () => {
    const empty = join(cwd, 'run-empty.db');
    writeFileSync(empty, '');
    expect((await remit('--db', empty, '--workflow', REFUND_MODULE, 'run')).code).toBe(0);
    const text = join(cwd, 'run-notes.txt');
    writeFileSync(text, 'not a database\n'.repeat(200));
    const before = digest(text);
    const refused = await remit('--db', text, '--workflow', REFUND_MODULE, '--json', 'run');
    expect(refused.code).toBe(8);
    expect(refused.json()).toMatchObject({ error: { code: 'REMIT_STORE', storeCode: 'SQLITE_NOTADB' } });
    expect(digest(text)).toBe(before);
    const guide = readFileSync(new URL('../../../docs/guide.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(guide.includes('a file that is not SQLite at all is a store error (`SQLITE_NOTADB`, exit code 8)'), 'docs/guide.md, "The CLI"').toBe(true);
  });

  it('another program\'s WAL database left with an un-checkpointed WAL (its writer killed) keeps its file and its WAL', async () => {
    const walFile = join(cwd, 'foreign-wal.db');
    const writer = `const D = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))});
      const d = new D(${JSON.stringify(walFile)}); d.pragma('journal_mode = WAL'); d.pragma('wal_autocheckpoint = 0');
      d.exec('CREATE TABLE t (x)'); for (let i = 0; i < 100; i++) d.prepare('INSERT INTO t VALUES (?)').run(i);
      process.kill(process.pid, 'SIGKILL');`;
    expect(spawnSync(process.execPath, ['-e', writer]).signal).toBe('SIGKILL');
    expect(existsSync(`${walFile}-wal`)).toBe(true);
    const before = [digest(walFile), digest(`${walFile}-wal`)];
    expect((await remit('--db', walFile, 'runs')).code).toBe(3);
    expect([digest(walFile), digest(`${walFile}-wal`)]).toEqual(before);
  });

  it('a store opened with create: false refuses it with StoreNotFoundError, and opens a REMIT file', async () => {
    const foreign = join(cwd, 'foreign-lib.db');
    const other = new Database(foreign);
    other.exec('CREATE TABLE t (x)');
    other.close();
    expect(() => new SqliteStore(foreign, { create: false })).toThrow(expect.objectContaining({ code: 'REMIT_STORE_NOT_FOUND', path: foreign }));
    const own = join(cwd, 'own.db');
    await new SqliteStore(own).close();
    const reopened = new SqliteStore(own, { create: false });
    expect(await reopened.listRuns()).toEqual([]);
    await reopened.close();
  });
});

const COUNTER_MODULE = fileURLToPath(new URL('../../test-support/counter-workflow.ts', import.meta.url));

describe('damage the listing sees', () => {
  const db = join(cwd, 'listing.db');

  it('a record renumbered (a seq gap) is BAD_RECORD_SEQ in every view, not a conflict forever; a run listed without records is damaged; runs exits 7', async () => {
    const store = new SqliteStore(db);
    const library = new Remit(store, await createCore('reference'), [counter], undefined, { groupPureSteps: false });
    for (const runId of ['sound', 'gap']) expect((await library.start(counter, { i: 0 }, { runId })).status).toBe('completed');
    await store.close();
    const raw = new Database(db);
    raw.prepare('UPDATE remit_records SET seq = 100 WHERE run_id = ? AND seq = 2').run('gap');
    raw.prepare('INSERT INTO remit_runs (run_id, created_at_ms, status) VALUES (?, ?, NULL)').run('ghost', 1);
    raw.close();

    const runs = await remit('--db', db, '--json', 'runs');
    expect(runs.code).toBe(7);
    const byId = Object.fromEntries(runs.json().map((r: { runId: string }) => [r.runId, r]));
    expect(byId['sound']).toMatchObject({ status: 'completed' });
    expect(byId['gap']).toMatchObject({ status: 'damaged', headSeq: 1, damage: { code: 'BAD_RECORD_SEQ', seq: 2, repairable: false } });
    expect(byId['ghost']).toMatchObject({ status: 'damaged', damage: { code: 'NO_RECORDS' } });

    const scrub = await remit('--db', db, '--json', 'scrub', '--all');
    expect(scrub.code).toBe(7);
    expect(scrub.json()).toMatchObject({ runs: 3, problems: expect.arrayContaining(['gap', 'ghost']) });

    const inspect = await remit('--db', db, 'inspect', 'gap');
    expect(inspect.code).toBe(7);
    const resumed = await remit('--db', db, '--workflow', COUNTER_MODULE, '--json', 'continue', 'gap');
    expect(resumed.code).toBe(7);
    expect(resumed.json()).toMatchObject({ error: { code: 'REMIT_LOG_CORRUPT', runId: 'gap', seq: 2, logError: 'BAD_RECORD_SEQ' } });
    // The listing without records names what can be done, and a new run under its id replaces it.
    const ghostLine = (await remit('--db', db, 'runs')).stdout.split('\n').find((l) => l.startsWith('ghost'));
    expect(ghostLine).toMatch(/^ghost\s+\?\s+damaged\s+-\s/); // no workflow known, no head
    expect(ghostLine).toMatch(/NO_RECORDS at seq 0: nothing of the run is left .* \(`remit (\S+ )*run --run-id=ghost` replaces the listing on the memory, SQLite and PostgreSQL stores\) makes the same idempotency keys as the lost run/);
    expect((await remit('--db', db, '--workflow', COUNTER_MODULE, 'run', '--run-id', 'ghost')).code).toBe(0);
    expect((await remit('--db', db, '--json', 'runs')).json().find((r: { runId: string }) => r.runId === 'ghost')).toMatchObject({ status: 'completed' });
  });
});

describe('a run listed without records', () => {
  const db = join(cwd, 'no-records.db');

  it('is NO_RECORDS damage (exit 7) for every command that reads or drives it, naming the run and what to do; a run not listed exits 3', async () => {
    const store = new SqliteStore(db);
    await new Remit(store, await createCore('reference'), [counter]).start(counter, { i: 0 }, { runId: 'ghost' });
    await store.close();
    const raw = new Database(db);
    raw.prepare('DELETE FROM remit_records WHERE run_id = ?').run('ghost');
    raw.prepare('DELETE FROM remit_summaries WHERE run_id = ?').run('ghost');
    raw.close();
    const before = digest(db);
    const advice = /restore the store from a backup, or start a new run under a new id; a new run under this id \(`remit (\S+ )*run --run-id=ghost` replaces the listing on the memory, SQLite and PostgreSQL stores\) makes the same idempotency keys as the lost run/;

    const inspect = await remit('--db', db, 'inspect', 'ghost');
    expect(inspect.code).toBe(7);
    expect(inspect.stdout).toMatch(/^run ghost  status damaged  next NONE$/m);
    expect(inspect.stdout).toMatch(/DAMAGED at seq 0 \(byte offset 0\): NO_RECORDS: the store lists the run but keeps none of its records/);
    expect(inspect.stdout).toMatch(advice);
    expect((await remit('--db', db, '--json', 'inspect', 'ghost')).json()).toMatchObject({ status: 'damaged', damage: { code: 'NO_RECORDS', seq: 0 } });

    const corrupt = { code: 'REMIT_LOG_CORRUPT', runId: 'ghost', seq: 0, logError: 'NO_RECORDS', advice: expect.stringMatching(advice) };
    for (const args of [['continue', 'ghost'], ['resume', 'ghost', 'tick@1', '{}'], ['fork', 'ghost', '0']]) {
      const out = await remit('--db', db, '--workflow', COUNTER_MODULE, '--json', ...args);
      expect(out.code, args.join(' ')).toBe(7);
      expect(out.json(), args.join(' ')).toMatchObject({ error: corrupt, exitCode: 7 });
      const text = await remit('--db', db, '--workflow', COUNTER_MODULE, ...args);
      expect(text.code).toBe(7);
      expect(text.stderr).toMatch(/^remit: REMIT_LOG_CORRUPT: the store lists the run but keeps none of its records \(NO_RECORDS\); .*\[run ghost, seq 0\]$/m);
    }
    const repair = await remit('--db', db, '--json', 'repair', 'ghost');
    expect(repair.code).toBe(7);
    expect(repair.json()).toMatchObject({ error: { code: 'REMIT_REPAIR_REFUSED', runId: 'ghost', seq: 0, why: expect.stringMatching(/^NO_RECORDS: /) } });
    const scrub = await remit('--db', db, 'scrub', 'ghost');
    expect(scrub.code).toBe(7);
    expect(scrub.stdout).toMatch(/^run ghost: DAMAGED at seq 0: NO_RECORDS \(corrupt\): .*remit --db=\S+ --workflow '<module>' run --run-id=ghost/);
    const all = await remit('--db', db, '--json', 'scrub', '--all');
    expect(all.code).toBe(7);
    expect(all.json()).toMatchObject({ runs: 1, problems: ['ghost'], failures: [], reports: [{ runId: 'ghost', damage: { code: 'NO_RECORDS' } }] });

    for (const args of [['inspect'], ['continue'], ['fork', '0'], ['repair'], ['scrub']]) {
      const [command, ...rest] = args;
      const out = await remit('--db', db, '--workflow', COUNTER_MODULE, '--json', command!, 'nobody', ...rest);
      expect(out.code, command).toBe(3);
      expect(out.json(), command).toMatchObject({ error: { code: 'REMIT_RUN_NOT_FOUND', runId: 'nobody' } });
    }
    // None of it wrote to the database.
    expect(digest(db)).toBe(before);
  });
});

describe('a workflow module that does not load', () => {
  it('is a usage error (exit 2) naming the module and what went wrong; a failed run leaves no database behind', () => {
    const syntax = join(cwd, 'syntax.mjs');
    writeFileSync(syntax, 'export const x = ;\n');
    const throws = join(cwd, 'throws.mjs');
    writeFileSync(throws, 'throw new Error("import boom");\n');
    const factory = join(cwd, 'factory.mjs');
    writeFileSync(factory, 'export function createWorkflows() { throw new TypeError("no config"); }\n');
    const oddThrow = join(cwd, 'odd-throw.mjs');
    writeFileSync(oddThrow, 'export async function createWorkflows() { throw Object.create(null); }\n');
    for (const [module, pattern] of [
      [syntax, /importing the module threw SyntaxError: Unexpected token ';' at .*syntax\.mjs:1/],
      [throws, /importing the module threw Error: import boom \(at file:.*throws\.mjs:1/],
      [factory, /createWorkflows\(\) threw TypeError: no config/],
      [oddThrow, /createWorkflows\(\) threw a value: \{\}/],
      [cwd, /not a file/],
    ] as const) {
      const db = join(cwd, `fresh-${Math.random().toString(16).slice(2)}.db`);
      const run = spawnSync(process.execPath, [...tsx, MAIN, '--db', db, '--workflow', module, 'run'], { cwd, encoding: 'utf8', timeout: 60_000 });
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr).toMatch(pattern);
      expect(run.stderr).not.toMatch(/\n\s+at /); // one line, no stack trace
      expect(existsSync(db)).toBe(false);
    }
  });

  it('a run refused for its --name, its input or its --run-id creates no database (checked before it is created)', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['--name', 'zzz'], 6, /^remit: REMIT_UNKNOWN_WORKFLOW: no workflow named "zzz" is registered \(known: refund\); --name picks a workflow of the module /],
      [['--input', '{"orderId":""}'], 5, /REMIT_STATE_INVALID/],
      [['--input', '{"orderId":"o","customerEmail":"a@b.co","amountCents":1,"reason":"damaged","extra":1n}'], 2, /--input is not valid JSON/],
      [['--run-id', ' '], 2, /REMIT_RUN_ID_INVALID.*--run-id/],
      [['--instance-id', ''], 2, /REMIT_OPTION_INVALID: option instanceId/],
    ];
    for (const [args, code, message] of cases) {
      const folder = join(cwd, `refused-${Math.random().toString(16).slice(2)}`);
      const db = join(folder, 'remit.db');
      const global = args[0] === '--instance-id' ? args : [];
      const run = await remit('--db', db, ...global, '--workflow', REFUND_MODULE, 'run', ...(global.length > 0 ? [] : args));
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(code);
      expect(run.stderr).toMatch(message);
      expect(existsSync(db), args.join(' ')).toBe(false);
      expect(existsSync(`${db}-wal`)).toBe(false);
    }
    const accepted = join(cwd, `accepted-${Math.random().toString(16).slice(2)}`, 'remit.db');
    expect((await remit('--db', accepted, '--workflow', REFUND_MODULE, 'run', '--run-id', 'ok')).code).toBe(0);
    expect(existsSync(accepted)).toBe(true);
    // An existing file without REMIT's tables (empty, or another program's) gets them from `run`.
    for (const existing of [join(cwd, 'empty-for-run.db'), join(cwd, 'foreign-for-run.db')]) {
      if (existing.includes('empty')) writeFileSync(existing, '');
      else new Database(existing).exec('CREATE TABLE customers (id INTEGER PRIMARY KEY)').close();
      const run = await remit('--db', existing, '--workflow', REFUND_MODULE, 'run', '--run-id', 'in-existing');
      expect(run.code, run.stderr).toBe(0);
    }
  });

  it('a module createRemit refuses (two definitions of one name) creates no database either', async () => {
    const workflowModule = new URL('../workflow/workflow.ts', import.meta.url).href;
    const module = join(cwd, 'same-name.ts');
    writeFileSync(module, `import { z } from 'zod';
import { END, workflow } from ${JSON.stringify(workflowModule)};
const state = z.object({ n: z.number() });
export const workflows = [
  workflow({ name: 'same', version: '1', state }).pure('a', { run: () => ({}), next: END }).build(),
  workflow({ name: 'same', version: '1', state }).pure('b', { run: () => ({}), next: END }).build(),
];
export const sampleInput = { n: 1 };
`);
    const folder = join(cwd, `same-name-${Math.random().toString(16).slice(2)}`);
    const db = join(folder, 'remit.db');
    const run = await remit('--db', db, '--workflow', module, 'run');
    expect(run.code, run.stderr).toBe(6);
    expect(run.stderr).toMatch(/REMIT_DEFINITION_INVALID/);
    expect(existsSync(db)).toBe(false);
  });

  it('a TypeScript module, under the built CLI on plain node, is refused with what to do instead', () => {
    // The built bin as a service runs it (scripts/setup.sh builds dist before the tests).
    const builtMain = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
    const module = join(cwd, 'workflows.ts');
    writeFileSync(module, 'export const answer: number = 42;\n');
    const db = join(cwd, 'ts-module.db');
    const run = spawnSync(process.execPath, [builtMain, '--db', db, '--workflow', module, 'run'], { cwd, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 60_000 });
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/Unknown file extension "\.ts".*compile the module to JavaScript, or run the CLI under a TypeScript loader/);
    expect(existsSync(db)).toBe(false);
  });

  it('a broken REMIT_WORKFLOW does not break the commands that need no module', () => {
    const db = join(cwd, 'env.db');
    const throws = join(cwd, 'throws-env.mjs');
    writeFileSync(throws, 'throw new Error("import boom");\n');
    const created = spawnSync(process.execPath, [...tsx, MAIN, '--db', db, '--create', 'runs'], { cwd, encoding: 'utf8', timeout: 60_000 });
    expect(created.status, created.stderr).toBe(0);
    for (const value of [throws, '']) {
      const runs = spawnSync(process.execPath, [...tsx, MAIN, '--db', db, 'runs'], { cwd, encoding: 'utf8', env: { ...process.env, REMIT_WORKFLOW: value }, timeout: 60_000 });
      expect(runs.status, runs.stderr).toBe(0);
      expect(runs.stdout).toMatch(/no runs/);
    }
  });

  it('a module REMIT_WORKFLOW names is named by the variable in a refusal, not by a --workflow never passed', () => {
    const db = join(cwd, 'env-named.db');
    const missing = join(cwd, 'no-such-module.mjs');
    const throws = join(cwd, 'throws-named.mjs');
    writeFileSync(throws, 'throw new Error("import boom");\n');
    for (const [value, problem] of [[missing, /no such file/], [throws, /importing the module threw Error: import boom/]] as const) {
      const run = spawnSync(process.execPath, [...tsx, MAIN, '--db', db, 'run'], { cwd, encoding: 'utf8', env: { ...process.env, REMIT_WORKFLOW: value }, timeout: 60_000 });
      expect(run.status, run.stderr).toBe(2);
      expect(run.stderr).toContain(`REMIT_WORKFLOW=${value}: `);
      expect(run.stderr).toMatch(problem);
      expect(run.stderr).not.toContain('--workflow ' + value);
      // Given as --workflow, the flag is named.
      const flagged = spawnSync(process.execPath, [...tsx, MAIN, '--db', db, '--workflow', value, 'run'], { cwd, encoding: 'utf8', timeout: 60_000 });
      expect(flagged.stderr).toContain(`--workflow ${value}: `);
    }
  });
});

describe('command lines', () => {
  it('--json prints commander\'s own refusals as JSON with a code; --json after -- is an argument; --version', async () => {
    const db = join(cwd, 'json.db');
    await new SqliteStore(db).close();
    const missing = await remit('--db', db, '--json', 'inspect');
    expect(missing.code).toBe(2);
    expect(missing.json()).toEqual({ error: { name: 'UsageError', code: 'CLI_USAGE', message: expect.stringMatching(/missing required argument 'runId'/) }, exitCode: 2 });
    const unknown = await remit('--json', 'frobnicate');
    expect(unknown.json()).toMatchObject({ error: { code: 'CLI_USAGE' }, exitCode: 2 });
    const badSeq = await remit('--db', db, '--json', 'fork', 'r', 'three');
    expect(badSeq.json()).toMatchObject({ error: { name: 'UsageError', code: 'CLI_USAGE', message: expect.stringMatching(/<seq> must be a sequence number/) } });
    const badWait = await remit('--db', db, '--workflow', REFUND_MODULE, 'continue', 'r', '--wait', 'soon');
    expect(badWait.stderr).toMatch(/--wait must be a whole number of milliseconds/);
    const literal = await remit('--db', db, 'inspect', '--', '--json');
    expect(literal.code).toBe(3);
    expect(literal.stdout).toBe('');
    const version = await remit('--version');
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
  });

  it('an empty --instance-id or fork --run-id is refused (exit 2), not replaced by a generated one', async () => {
    const db = join(cwd, 'empty-options.db');
    expect((await remit('--db', db, '--workflow', REFUND_MODULE, 'run', '--run-id', 'src')).code).toBe(0);
    const instance = await remit('--db', db, '--instance-id', '', '--json', 'runs');
    expect(instance.code).toBe(2);
    expect(instance.json()).toMatchObject({ error: { code: 'REMIT_OPTION_INVALID', option: 'instanceId' } });
    const fork = await remit('--db', db, '--json', 'fork', 'src', '0', '--run-id', '');
    expect(fork.code).toBe(2);
    expect(fork.json()).toMatchObject({ error: { code: 'REMIT_RUN_ID_INVALID' } });
  });

  it('a refused fork --run-id names the flag typed, --run-id, as run --run-id does: for its own rule and for effect keys too long', async () => {
    const db = join(cwd, 'fork-run-id.db');
    const longNode = '%'.repeat(150);
    const wide = workflow({ name: 'wide', version: '1', state: z.object({}) }).effect(longNode, { run: async () => null, next: END }).build();
    const store = new SqliteStore(db);
    await new Remit(store, await createCore('reference'), [wide]).start(wide, {}, { runId: 'src' });
    await store.close();
    for (const [newRunId, problem] of [[' ', /no visible character/], ['%'.repeat(200), /effect keys could reach \d+ bytes/]] as const) {
      const fork = await remit('--db', db, '--json', 'fork', 'src', '0', '--run-id', newRunId);
      expect(fork.code).toBe(2);
      const error = fork.json().error as { code: string; field: string; message: string };
      expect(error).toMatchObject({ code: 'REMIT_RUN_ID_INVALID', field: '--run-id' });
      expect(error.message).toMatch(problem);
      expect(error.message).not.toContain('options.newRunId');
    }
    expect((await remit('--db', db, '--json', 'runs')).json()).toHaveLength(1);
  });

  it('suggested commands quote the run id for the shell', async () => {
    const db = join(cwd, 'quoting.db');
    const runId = "it's; rm -rf x";
    const run = await remit('--db', db, '--workflow', REFUND_MODULE, 'run', '--run-id', runId);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`resume with: remit --db=${db} --workflow=${REFUND_MODULE} resume 'it'\\''s; rm -rf x' managerApproval@6 '<json value>'`);
    // A run id that starts with "-" goes after "--", and the suggested command works as printed.
    const dashed = await remit('--db', db, '--workflow', REFUND_MODULE, 'run', '--run-id=-x');
    expect(dashed.stdout).toContain(`resume with: remit --db=${db} --workflow=${REFUND_MODULE} resume -- -x managerApproval@6 '<json value>'`);
    const resumed = await remit('--db', db, '--workflow', REFUND_MODULE, 'resume', '--', '-x', 'managerApproval@6', '{"approved":true,"approver":"kim"}');
    expect(resumed.code, resumed.stderr).toBe(0);
  });

  it('every command the CLI suggests, pasted as printed, reaches the database and workflows it was given', async () => {
    mkdirSync(join(cwd, 'a folder'), { recursive: true });
    const db = join(cwd, 'a folder', "ops's.db");
    const globals = ['--db', db, '--core', 'reference', '--workflow', REFUND_MODULE, '--instance-id', 'ops-1'];
    /** The words sh reads from a suggested line, after its leading `remit`; never the instance id. */
    const wordsOf = (line: string): string[] => {
      expect(line).not.toMatch(/instance-id/);
      const words = spawnSync('sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' }).stdout.split('\0').slice(0, -1);
      expect(words.slice(0, 3)).toEqual(['remit', `--db=${db}`, '--core=reference']);
      return words.slice(1);
    };
    const run = await remit(...globals, 'run', '--run-id', 'p1');
    const resumed = await remit(...wordsOf(/resume with: (.*) '<json value>'$/m.exec(run.stdout)![1]!), '{"approved":true,"approver":"kim"}');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^run p1 \(refund\): completed/);

    // A command that loads no module cannot know it: the suggestion says where it goes.
    const unknownModule = await remit('--db', db, 'fork', 'p1', '0', '--run-id', 'p1-look');
    expect(unknownModule.stdout).toContain(`continue with: remit ${shellWord(`--db=${db}`)} --workflow '<module>' continue p1-look`);
    const fork = await remit(...globals, 'fork', 'p1', '0', '--run-id', 'p2');
    const continued = await remit(...wordsOf(/continue with: (.*)$/m.exec(fork.stdout)![1]!));
    expect(continued.code, continued.stderr).toBe(0);
    expect(continued.stdout).toMatch(/^run p2 \(refund\): parked/);

    // A torn last record: the error's advice and the listing both suggest the repair.
    const raw = new Database(db);
    raw.prepare('UPDATE remit_records SET bytes = substr(bytes, 1, 20) WHERE run_id = ? AND seq = (SELECT max(seq) FROM remit_records WHERE run_id = ?)').run('p2', 'p2');
    raw.close();
    const refused = await remit(...globals, 'continue', 'p2');
    expect(refused.stderr).toMatch(/REMIT_LOG_TORN/);
    const advised = /`(remit [^`]* repair p2)`/.exec(refused.stderr)![1]!;
    const listed = await remit(...globals, 'runs');
    expect(/TORN at seq \d+: (remit .* repair p2)$/m.exec(listed.stdout)![1]).toBe(advised);
    const repaired = await remit(...wordsOf(advised));
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.stdout).toMatch(/removed/);
    expect((await remit(...globals, 'continue', 'p2')).code).toBe(0);
  });

  it('a command given only the defaults suggests commands without options; a library caller\'s advice names none', async () => {
    const inDefault = mkdtempSync(join(tmpdir(), 'remit-cli-default-'));
    try {
      const run = await cliInProcess(inDefault)('--workflow', REFUND_MODULE, 'run', '--run-id', 'd1');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`resume with: remit --workflow=${REFUND_MODULE} resume d1 managerApproval@6 '<json value>'`);
    } finally {
      rmSync(inDefault, { recursive: true, force: true });
    }
    // The options are the CLI's: once its command has returned, library text names none.
    expect(suggestCommand('repair', 'x')).toBe('remit repair x');
  });

  // A text holding a character human output escapes is quoted $'...', for bash: cli-pasting.test.ts.
  it('property: a shellWord of a text human output prints as it is is read back by sh (POSIX, dash) as exactly that text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 24 }).filter((s) => !s.includes('\0') && displayText(s) === s), (text) => {
        const echoed = spawnSync('sh', ['-c', `printf '%s' ${shellWord(text)}`], { encoding: 'utf8' });
        expect(echoed.stdout).toBe(text);
      }),
      { numRuns: 60 },
    );
  });

  it('output cut short by its reader ends the command quietly with its exit code', async () => {
    const db = join(cwd, 'pipe.db');
    // Far more output than a pipe holds (64 KiB), so the writer meets the closed pipe.
    const store = new SqliteStore(db, { synchronous: 'NORMAL' });
    const library = new Remit(store, await createCore('reference'), [counter]);
    for (let i = 0; i < 1000; i++) await library.start(counter, { i: 0 }, { runId: `run-${String(i).padStart(4, '0')}-${'x'.repeat(100)}` });
    await store.close();
    const child = spawn(process.execPath, [...tsx, MAIN, '--db', db, '--json', 'runs'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    expect(stderr).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
  });
});
