/**
 * scripts/prune-dist.mjs (ts-shell's prepack): `npm pack` must not ship a compiled module whose
 * source is gone, and must keep every file a current source compiles to.
 */

import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module without declarations
import { pruneDist } from './prune-dist.mjs';

const root = mkdtempSync(join(tmpdir(), 'remit-prune-dist-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function files(folder: string, made: string[]): void {
  for (const rel of made) {
    mkdirSync(dirname(join(folder, rel)), { recursive: true });
    writeFileSync(join(folder, rel), '');
  }
}

function listed(folder: string): string[] {
  return (readdirSync(folder, { recursive: true, withFileTypes: true }) as { isFile(): boolean; parentPath: string; name: string }[])
    .filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(folder.length + 1)).sort();
}

describe('prune-dist', () => {
  it('removes the outputs of deleted sources, of tests and foreign files, keeps those of current sources and the build stamp, and drops emptied folders', () => {
    const src = join(root, 'src');
    const dist = join(root, 'dist');
    files(src, ['index.ts', 'core/codec.ts', 'core/codec.test.ts']);
    const kept = ['.build-stamp', 'core/codec.d.ts', 'core/codec.js', 'core/codec.js.map', 'index.d.ts', 'index.js', 'index.js.map'];
    const stale = ['old.js', 'old.d.ts', 'old.js.map', 'gone/deep.js', 'core/codec.test.js', 'notes.txt'];
    files(dist, [...kept, ...stale]);
    expect((pruneDist(dist, src) as string[]).sort()).toEqual(stale.sort());
    expect(listed(dist)).toEqual(kept.sort());
    expect(readdirSync(dist)).not.toContain('gone');
    expect(pruneDist(dist, src)).toEqual([]); // nothing left to remove
  });

  it('does nothing for a dist/ that is not there', () => {
    expect(pruneDist(join(root, 'missing'), join(root, 'src'))).toEqual([]);
  });
});
