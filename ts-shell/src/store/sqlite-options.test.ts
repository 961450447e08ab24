/**
 * openSqliteStore refuses a path or an option value it cannot use with OptionInvalidError naming
 * it, before it touches the file system: nothing is created, opened or looked at.
 *
 * - `path`: a non-empty string without NUL ('\u0000'). better-sqlite3 (SQLite's C API) ends a
 *   path at its first NUL, so `/x/a\u0000b.db` would silently open `/x/a`.
 * - `create`: true, false or absent (true). Any other value ('no', 0, 'false') is not taken as
 *   either: 'no' used to create the file.
 * - `clock`: a function, or absent; `synchronous`: 'FULL' or 'NORMAL'; `busyTimeoutMs`: a whole
 *   number of milliseconds from 0 to 2 147 483 647.
 */

import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { OptionInvalidError, StoreNotFoundError } from '../errors.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite.js';

const root = mkdtempSync(join(tmpdir(), 'remit-sqlite-options-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
/** A fresh, empty folder: a refusal must leave it empty. */
function freshDir(): string {
  const dir = join(root, `d${n++}`);
  mkdirSync(dir);
  return dir;
}

function refusal(open: () => unknown): unknown {
  try {
    const store = open() as { close(): Promise<void> };
    void store.close();
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectRefused(error: unknown, option: string): void {
  expect(error).toBeInstanceOf(OptionInvalidError);
  expect(error).toMatchObject({ code: 'REMIT_OPTION_INVALID', option, field: option });
}

/** Any value, of any type (fast-check's anything, plus the values a typo or a config file gives). */
const anyValue = fc.oneof(
  fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withNullPrototype: true }),
  fc.constantFrom<unknown>('no', 'false', 'true', 0, 1, '', null, NaN, Infinity, -1, 1.5, '5000', [], {}, () => true, Symbol('x')),
);

describe('openSqliteStore: path', () => {
  it('(property) a path with a NUL anywhere is refused (field path) before the file system is touched: nothing is created, not even the truncated path', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), fc.boolean(), fc.constantFrom<boolean | undefined>(undefined, true, false), (before, after, inFolder, create) => {
        const dir = freshDir();
        const name = `${before}\u0000${after}`.replaceAll('/', '_');
        const path = inFolder ? join(dir, name, 'remit.db') : join(dir, `a${name}.db`);
        const error = refusal(() => openSqliteStore(path, create === undefined ? {} : { create }));
        expectRefused(error, 'path');
        expect((error as Error).message).toMatch(/NUL/);
        expect(readdirSync(dir)).toEqual([]);
        expect(existsSync(join(dir, 'a'))).toBe(false);
      }),
      { numRuns: 100 },
    );
  });

  it('the example of the report: /tmp/.../a\\u0000b.db is refused; /tmp/.../a is not created', () => {
    const dir = freshDir();
    expectRefused(refusal(() => openSqliteStore(join(dir, 'a\u0000b.db'))), 'path');
    expect(existsSync(join(dir, 'a'))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('(property) a path that is not a non-empty string is refused (field path)', () => {
    fc.assert(
      fc.property(anyValue.filter((v) => typeof v !== 'string'), (path) => {
        expectRefused(refusal(() => openSqliteStore(path as string)), 'path');
      }),
      { numRuns: 100 },
    );
    expectRefused(refusal(() => openSqliteStore('')), 'path');
  });

  it('a path that names a folder is a StoreError EISDIR naming it, with or without create, and the folder is left as it was', () => {
    for (const create of [true, false]) {
      const dir = freshDir();
      const error = refusal(() => openSqliteStore(dir, { create }));
      expect(error, `create: ${create}`).toMatchObject({ code: 'REMIT_STORE', storeCode: 'EISDIR', operation: 'open', store: `sqlite:${dir}` });
      expect((error as Error).message).toMatch(/is a folder, not a database file/);
      expect(readdirSync(dir)).toEqual([]);
    }
  });

  it('an ordinary path and ":memory:" open', async () => {
    const dir = freshDir();
    const store = openSqliteStore(join(dir, 'ok.db'));
    expect(await store.listRuns()).toEqual([]);
    await store.close();
    const memory = openSqliteStore(':memory:');
    expect(await memory.listRuns()).toEqual([]);
    await memory.close();
  });
});

describe('openSqliteStore: option values', () => {
  const cases: { option: keyof SqliteStoreOptions; allowed: (value: unknown) => boolean }[] = [
    { option: 'create', allowed: (v) => v === undefined || typeof v === 'boolean' },
    { option: 'clock', allowed: (v) => v === undefined || typeof v === 'function' },
    { option: 'synchronous', allowed: (v) => v === undefined || v === 'FULL' || v === 'NORMAL' },
    { option: 'busyTimeoutMs', allowed: (v) => v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 0x7fff_ffff) },
  ];

  for (const { option, allowed } of cases) {
    it(`(property) ${option}: a value the store cannot use is refused, naming ${option}, and no file or folder is created`, () => {
      fc.assert(
        fc.property(anyValue.filter((v) => !allowed(v)), fc.boolean(), (value, inFolder) => {
          const dir = freshDir();
          const path = inFolder ? join(dir, 'sub', 'remit.db') : join(dir, 'remit.db');
          const error = refusal(() => openSqliteStore(path, { [option]: value }));
          expectRefused(error, option);
          expect(readdirSync(dir)).toEqual([]);
        }),
        { numRuns: 60 },
      );
    });
  }

  it('create: "no" (the report) is refused and creates nothing; create: false refuses a missing file; true and absent create it', async () => {
    const dir = freshDir();
    const path = join(dir, 'x.db');
    expectRefused(refusal(() => openSqliteStore(path, { create: 'no' as unknown as boolean })), 'create');
    expect(existsSync(path)).toBe(false);
    expect(refusal(() => openSqliteStore(path, { create: false }))).toBeInstanceOf(StoreNotFoundError);
    expect(existsSync(path)).toBe(false);
    const created = openSqliteStore(path, { create: true });
    await created.close();
    expect(existsSync(path)).toBe(true);
    const reopened = openSqliteStore(path, { create: false });
    await reopened.close();
    const other = join(dir, 'y.db');
    const byDefault = openSqliteStore(other, {});
    await byDefault.close();
    expect(existsSync(other)).toBe(true);
  });

  it('a clock function is used for commit times', async () => {
    const store = openSqliteStore(':memory:', { clock: () => 1234 });
    const { testRecord } = await import('../testing/test-record.js');
    await store.append('run', 0, [testRecord(0)]);
    expect((await store.readRecords('run'))[0]!.committedAtMs).toBe(1234);
    await store.close();
  });
});
