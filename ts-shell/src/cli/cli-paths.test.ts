/**
 * Paths given to the `remit` command: a database that cannot be opened fails fast with a message
 * naming the path (never a hang: Node's recursive mkdir loops forever on some paths, so folders
 * are made one level at a time); a database that does not exist is an error for every command but
 * `run` unless `--create` asks for it (a mistyped --db must not print "no runs"); `repair` is a
 * command. Child processes where a hang is possible: a synchronous loop cannot be timed out in-process.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { cliInProcess } from '../../test-support/cli-in-process.js';
import { shellWord } from '../errors.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const SINK = fileURLToPath(new URL('../testing/effect-sink.ts', import.meta.url));
const REFUND_MODULE = fileURLToPath(new URL('../../../examples/refund/index.ts', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'remit-cli-paths-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** A path whose folder cannot be created, and on which Node's recursive mkdir never returns. */
const UNCREATABLE = '/proc/remit-no-such-folder/remit.db';

// A hang is for ever (Node's recursive mkdir of such a path never returns): the bounds leave a
// child loading under tsx on a loaded machine all the time it may need.
function child(args: string[], timeoutMs = 90_000) {
  const started = Date.now();
  const out = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', env: { ...process.env, NODE_NO_WARNINGS: '1' }, timeout: timeoutMs });
  return { code: out.status, signal: out.signal, stdout: out.stdout, stderr: out.stderr, ms: Date.now() - started };
}

const tsx = ['--conditions=remit-source', '--import', import.meta.resolve('tsx')];

/** The same CLI in this process, output captured (fast); the working folder is the scratch one. */
const remit = cliInProcess(cwd);

describe('the CLI and the paths it is given', () => {
  it('a --db whose folder cannot be created fails fast with a store error naming the path (no hang)', () => {
    const run = child([...tsx, MAIN, '--workflow', REFUND_MODULE, '--core', 'reference', '--db', UNCREATABLE, 'run']);
    expect(run.signal).toBeNull();
    expect(run.ms).toBeLessThan(60_000);
    expect(run.code).toBe(8);
    expect(run.stderr).toMatch(/REMIT_STORE/);
    expect(run.stderr).toContain('/proc/remit-no-such-folder');
  });

  it('the example\'s file effect sink refuses a folder it cannot create instead of retrying mkdir forever', () => {
    const script = `const { FileEffectSink } = await import(${JSON.stringify(SINK)}); new FileEffectSink('/proc/remit-no-such-folder/effects');`;
    const made = child([...tsx, '--input-type=module', '-e', script]);
    expect(made.signal).toBeNull();
    expect(made.ms).toBeLessThan(60_000);
    expect(made.code).not.toBe(0);
    expect(made.stderr).toMatch(/cannot create the folder \/proc\/remit-no-such-folder/);
  });

  it('runs and inspect refuse a database that does not exist, create nothing, and say how to create one', async () => {
    const typo = join(cwd, 'typo', 'remit.db');
    for (const args of [['runs'], ['inspect', 'r1'], ['--workflow', REFUND_MODULE, 'continue', 'r1'], ['repair', 'r1']]) {
      const result = await remit('--db', typo, ...args);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/REMIT_STORE_NOT_FOUND/);
      expect(result.stderr).toContain(typo);
      expect(result.stderr).toMatch(/--create/);
      expect(existsSync(join(cwd, 'typo'))).toBe(false);
    }
    const created = await remit('--db', typo, '--create', 'runs');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/no runs/);
    expect(existsSync(typo)).toBe(true);
  });

  it('a --db that is a folder, and a JSON argument that is a folder, fail with a clear message', async () => {
    const folder = join(cwd, 'a-folder');
    mkdirSync(folder, { recursive: true });
    const asDb = await remit('--db', folder, 'runs');
    expect(asDb.code).toBe(8);
    expect(asDb.stderr).toContain(folder);
    const asValue = await remit('--db', join(cwd, 'x.db'), '--create', '--workflow', REFUND_MODULE, 'resume', 'r', 'managerApproval@5', `@${folder}`);
    expect(asValue.code).toBe(2);
    expect(asValue.stderr).toMatch(/<value>: .*a-folder is not a regular file or a pipe \(a device is read without end\); name a file holding the JSON value/);
    // A device would be read without end (from a security review: @/dev/zero ran to 5.7 GB).
    const asDevice = await remit('--db', join(cwd, 'x.db'), '--create', '--workflow', REFUND_MODULE, 'resume', 'r', 'managerApproval@5', '@/dev/zero');
    expect(asDevice.code).toBe(2);
    expect(asDevice.stderr).toMatch(/<value>: \/dev\/zero is not a regular file or a pipe/);
    // A pipe ends, and is read: a value piped in by the shell through @/dev/stdin.
    const db = join(cwd, 'piped.db');
    const started = spawnSync(process.execPath, [...tsx, MAIN, '--db', db, '--create', '--workflow', REFUND_MODULE, '--json', 'run', '-r', 'piped'], { cwd, encoding: 'utf8', timeout: 90_000 });
    const interrupt = (JSON.parse(started.stdout) as { interrupt: { id: string } }).interrupt.id;
    const command = [process.execPath, ...tsx, MAIN, '--db', db, '--workflow', REFUND_MODULE, 'resume', 'piped', interrupt, '@/dev/stdin'].map(shellWord).join(' ');
    const piped = spawnSync('bash', ['-c', `echo '{"approved": true, "approver": "ada"}' | ${command}`], { cwd, encoding: 'utf8', timeout: 90_000 });
    expect(piped.status, piped.stderr).toBe(0);
  });

  it('an empty --workflow (an unset variable in --workflow "$MODULE") is a usage error naming the empty path, not the working folder as "not a file"', async () => {
    for (const [value, args] of [['', ['run']], ['  ', ['runs']], ['', ['continue', 'r']]] as const) {
      const result = await remit('--db', join(cwd, 'empty-workflow.db'), '--create', '--workflow', value, ...args);
      expect(result.code, `${JSON.stringify(value)} ${args.join(' ')}`).toBe(2);
      expect(result.stderr).toMatch(/--workflow '\s*': an empty path; name your workflow module/);
      expect(result.stderr).not.toContain(cwd);
    }
  });

  it('a bare @ (an unset variable in @"$FILE") is a usage error naming the empty path, not the working folder read as the file', async () => {
    for (const [args, what] of [[['resume', 'r', 'managerApproval@5', '@'], '<value>'], [['run', '--input', '@ '], '--input']] as const) {
      const result = await remit('--db', join(cwd, 'bare-at.db'), '--create', '--workflow', REFUND_MODULE, ...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`${what}: an empty path after @`);
      expect(result.stderr).not.toContain(cwd);
    }
  });

  it('an empty --db (an unset variable in --db "$DB") is a usage error (exit 2), not the working folder opened as a database', async () => {
    for (const db of ['', '  ']) {
      for (const args of [['runs'], ['--workflow', REFUND_MODULE, 'run']]) {
        const result = await remit('--db', db, ...args);
        expect(result.code, `${JSON.stringify(db)} ${args.join(' ')}`).toBe(2);
        expect(result.stderr).toMatch(/--db .*: an empty path; name the database file/);
      }
    }
  });

  it('repair: a torn last record is listed as damaged, repaired by `remit repair`, and the run goes on', async () => {
    const db = join(cwd, 'repair.db');
    writeFileSync(join(cwd, 'marker'), '');
    const started = await remit('--db', db, '--core', 'reference', '--workflow', REFUND_MODULE, 'run', '--run-id', 'r9');
    expect(started.code).toBe(0);
    const raw = new Database(db);
    raw.prepare('UPDATE remit_records SET bytes = substr(bytes, 1, 20) WHERE run_id = ? AND seq = 6').run('r9');
    raw.close();
    const listed = await remit('--db', db, 'runs');
    expect(listed.stdout).toMatch(/r9\s+refund\s+damaged/);
    expect(listed.stdout).toContain(`remit --db=${db} repair r9`);
    const inspected = await remit('--db', db, 'inspect', 'r9');
    expect(inspected.code).toBe(7);
    expect(inspected.stdout).toMatch(/DAMAGED.*seq 6/);
    const repaired = await remit('--db', db, '--json', 'repair', 'r9');
    expect(repaired.code).toBe(0);
    expect(JSON.parse(repaired.stdout)).toMatchObject({ runId: 'r9', removedSeq: 6, removedKind: 'INTERRUPT_PARKED' });
    const continued = await remit('--db', db, '--core', 'reference', '--workflow', REFUND_MODULE, 'continue', 'r9');
    expect(continued.code).toBe(0);
    expect(continued.stdout).toMatch(/parked/);
    const again = await remit('--db', db, 'repair', 'r9');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/not damaged/);
  });
});
