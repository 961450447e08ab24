/**
 * SQLite: paths the store used to hand to SQLite as they were, with a wrong or no answer.
 *
 * - Leading or trailing whitespace (a newline read with the path from a config file):
 *   better-sqlite3 trims it, so REMIT checked one path and SQLite opened another (`create: true`
 *   made `app.db` and then failed ENOENT; `create: false` said "not found" beside `app.db`).
 *   Refused as an option now, nothing created.
 * - A FIFO, socket or device: `create: false` hung the process forever in the read-only probe's
 *   open(2). Refused now (StoreError NOT_A_FILE naming the path), a symbolic link followed.
 * - A permission SQLite lacks came out as SQLITE_CANTOPEN "unable to open database file" or
 *   SQLITE_READONLY_DIRECTORY, naming neither the path nor the access: now StoreError EACCES
 *   naming both. Tests run as root, which permissions do not stop, so these open the store in a
 *   child process run as nobody (setpriv).
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { OptionInvalidError } from '../errors.js';
import { openSqliteStore } from './sqlite.js';

const root = mkdtempSync(join(tmpdir(), 'remit-paths-'));
chmodSync(root, 0o755); // the child run as nobody must reach the fixtures
afterAll(() => {
  for (const dir of readdirSync(root)) chmodSync(join(root, dir), 0o755);
  rmSync(root, { recursive: true, force: true });
});
let cases = 0;
const freshDir = () => {
  const dir = join(root, `c${cases++}`);
  mkdirSync(dir, { mode: 0o777 });
  chmodSync(dir, 0o777);
  return dir;
};

const sqliteModule = fileURLToPath(new URL('./sqlite.ts', import.meta.url));
const opener = `
const { openSqliteStore } = await import(${JSON.stringify(sqliteModule)});
try {
  const store = openSqliteStore(process.argv[1], { create: process.argv[2] === 'true' });
  await store.append('r', 0, [new Uint8Array(16)]);
  await store.close();
  console.log(JSON.stringify({ opened: true }));
} catch (e) {
  console.log(JSON.stringify({ name: e.name, storeCode: e.storeCode, message: e.message }));
}`;

/** Opens (and writes to) the store in a child process, as nobody when asked; bounded, so a hang is a failure, not a stuck suite. */
function openInChild(path: string, create: boolean, asNobody = false): { opened?: boolean; name?: string; storeCode?: string; message?: string; timedOut?: boolean } {
  const node = [process.execPath, '--import', import.meta.resolve('tsx'), '--input-type=module', '-e', opener, path, String(create)];
  // Permissions stop every user but root: as root, the child runs as nobody; as anyone else, as itself.
  const [command, ...args] = asNobody && process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...node] : node;
  const result = spawnSync(command!, args, { encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_NO_WARNINGS: '1' } });
  if (result.error !== undefined && (result.error as { code?: string }).code === 'ETIMEDOUT') return { timedOut: true };
  const line = result.stdout.trim().split('\n').at(-1) ?? '';
  if (!line.startsWith('{')) throw new Error(`the child said: ${result.stdout}${result.stderr}`);
  return JSON.parse(line) as ReturnType<typeof openInChild>;
}

describe('a SQLite path with whitespace at either end', () => {
  it('is refused as an option, naming the whitespace, and nothing is created (create true or false)', () => {
    for (const create of [true, false]) {
      const dir = freshDir();
      if (!create) writeFileSync(join(dir, 'app.db'), '');
      for (const path of [`${join(dir, 'app.db')}\n`, `${join(dir, 'sub', 'app.db')} `, ` ${join(dir, 'app.db')}`]) {
        const error = (() => {
          try {
            openSqliteStore(path, { create });
          } catch (e) {
            return e;
          }
          return undefined;
        })();
        expect(error, JSON.stringify(path)).toBeInstanceOf(OptionInvalidError);
        expect((error as Error).message).toMatch(/must not start or end with whitespace \(it (ends with "(\\n| )"|starts with " ")\)/);
      }
      expect(readdirSync(dir)).toEqual(create ? [] : ['app.db']);
    }
  });

  it('is checked in time linear in the path: a long run of whitespace inside it is not searched again from each of its characters (regression)', () => {
    // From a security review: /\s+$/ took 10 s over a path holding 100,000 spaces before its end.
    // The bound is generous (the check now takes well under a millisecond here): it catches the
    // quadratic search, not a slow machine.
    const dir = freshDir();
    const path = join(dir, `a${' '.repeat(200_000)}b.db`);
    const started = performance.now();
    // The file system refuses so long a name (a StoreError naming it); the checks before it are what is timed.
    expect(() => openSqliteStore(path).close()).toThrow(expect.objectContaining({ code: 'REMIT_STORE' }));
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('a SQLite path naming a FIFO, a socket or a device', () => {
  it('is refused at once (NOT_A_FILE, naming the path), with or without create, also through a symbolic link: it does not hang', () => {
    const dir = freshDir();
    const fifo = join(dir, 'pipe.db');
    execFileSync('mkfifo', [fifo]);
    symlinkSync(fifo, join(dir, 'link.db'));
    for (const path of [fifo, join(dir, 'link.db'), '/dev/null']) {
      for (const create of [false, true]) {
        const outcome = openInChild(path, create);
        expect(outcome, `${path} create ${create}`).toMatchObject({ name: 'StoreError', storeCode: 'NOT_A_FILE' });
        expect(outcome.message).toContain(`${path} is a`);
      }
    }
  }, 120_000);
});

describe('a SQLite path this process may not use (run as nobody)', () => {
  it('is StoreError EACCES naming the path and the missing access, not SQLITE_CANTOPEN "unable to open database file"', () => {
    const dir = freshDir();
    const readOnly = join(dir, 'read-only');
    mkdirSync(readOnly);
    const unsearchable = join(dir, 'unsearchable');
    mkdirSync(unsearchable);
    writeFileSync(join(unsearchable, 'app.db'), '');
    const closed = join(dir, 'closed.db');
    writeFileSync(closed, '');
    chmodSync(closed, 0o000);
    // A REMIT file in a folder nobody may write: SQLite cannot create its -wal and -shm there.
    const existing = join(dir, 'existing');
    mkdirSync(existing);
    const made = openSqliteStore(join(existing, 'app.db'));
    void made.close();
    chmodSync(join(existing, 'app.db'), 0o666);
    chmodSync(readOnly, 0o555);
    chmodSync(unsearchable, 0o700);
    chmodSync(existing, 0o555);
    const cases: Array<[string, boolean, RegExp]> = [
      [join(readOnly, 'new.db'), true, /no write permission on the folder .*read-only, so the database file .*new\.db cannot be created in it/],
      [join(unsearchable, 'app.db'), true, /no search \(x\) permission on the folder .*unsearchable, so .*app\.db cannot be reached/],
      [closed, true, /no read or write permission on the database file .*closed\.db/],
      [closed, false, /no read or write permission on the database file .*closed\.db/],
      [join(existing, 'app.db'), true, /no write permission on the folder .*existing, where SQLite creates app\.db-wal beside the database file/],
    ];
    for (const [path, create, message] of cases) {
      const outcome = openInChild(path, create, true);
      expect(outcome, `${path} create ${create}`).toMatchObject({ name: 'StoreError', storeCode: 'EACCES' });
      expect(outcome.message).toMatch(message);
    }
    expect(existsSync(join(readOnly, 'new.db'))).toBe(false);
  }, 120_000);
});
