// Removes from a compiled folder (ts-shell/dist) every file whose TypeScript source is gone, so
// that `npm pack` never ships a module left by an earlier build of a source since deleted or
// renamed. Only such files go: a build in progress or another process reading dist/ keeps every
// file it can use (a whole `rm -rf dist` in prepack would pull dist/ from under them).
//
//   node scripts/prune-dist.mjs <dist folder> <source folder>   (from ts-shell's prepack: dist src)
import { existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const OUTPUTS = ['.d.ts.map', '.d.ts', '.js.map', '.js'];
const KEPT = new Set(['.build-stamp']);

/** The source a compiled file comes from (rel without its output suffix, plus .ts), or null for a file tsc does not write. */
export function sourceOf(rel) {
  const suffix = OUTPUTS.find((s) => rel.endsWith(s));
  return suffix === undefined ? null : `${rel.slice(0, -suffix.length)}.ts`;
}

/** Removes the stale files under `dist` (returns their paths relative to it) and the folders left empty. */
export function pruneDist(dist, src) {
  const removed = [];
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        walk(path);
        if (readdirSync(path).length === 0) rmdirSync(path);
        continue;
      }
      const rel = relative(dist, path);
      if (KEPT.has(rel)) continue;
      const source = sourceOf(rel);
      if (source !== null && !source.endsWith('.test.ts') && existsSync(join(src, source))) continue;
      rmSync(path);
      removed.push(rel);
    }
  };
  if (existsSync(dist)) walk(dist);
  return removed;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dist, src] = process.argv.slice(2);
  if (dist === undefined || src === undefined) {
    process.stderr.write('usage: node scripts/prune-dist.mjs <dist folder> <source folder>\n');
    process.exit(2);
  }
  for (const rel of pruneDist(dist, src)) process.stdout.write(`prune-dist: removed ${rel} (its source is gone)\n`);
}
