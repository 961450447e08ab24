/**
 * The SQLite store gives better-sqlite3 its native addon (installedAddon) instead of letting the
 * `bindings` package search for it; where the addon is not at its install path, or does not load,
 * the search is left to better-sqlite3, so a store still opens or fails in better-sqlite3's words.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { installedAddon } from './sqlite.js';

const require = createRequire(import.meta.url);
const packageDir = dirname(require.resolve('better-sqlite3/package.json'));
const dirs: string[] = [];
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'remit-addon-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('installedAddon', () => {
  it('is the addon better-sqlite3 itself loads, from its install path', () => {
    const addon = installedAddon(require, packageDir) as { Database?: unknown } | undefined;
    expect(addon).toBeDefined();
    expect(typeof addon!.Database).toBe('function');
    // The same module object the `bindings` search finds: one addon per process, initialized once.
    expect(addon).toBe(require(join(packageDir, 'build', 'Release', 'better_sqlite3.node')));
  });

  it('is undefined, so better-sqlite3 searches as usual, where no addon is installed', () => {
    expect(installedAddon(require, scratch())).toBeUndefined();
  });

  it('is undefined where the path is a folder, or a file that does not load as an addon', () => {
    const folder = scratch();
    mkdirSync(join(folder, 'build', 'Release', 'better_sqlite3.node'), { recursive: true });
    expect(installedAddon(require, folder)).toBeUndefined();
    const broken = scratch();
    mkdirSync(join(broken, 'build', 'Release'), { recursive: true });
    writeFileSync(join(broken, 'build', 'Release', 'better_sqlite3.node'), 'not a shared object');
    expect(installedAddon(require, broken)).toBeUndefined();
  });
});
