/** What every suite receives from bench/run.ts. */

import fs from 'node:fs';
import path from 'node:path';
import type { Profile } from './profile.js';
import type { ResultRow, SuiteName } from './results.js';
import type { ChartSpec } from './svg.js';

export interface SuiteContext {
  profile: Profile;
  repoRoot: string;
  /** Scratch folder of this run for database files (under --out when given, else bench/results/tmp/); emptied per suite. */
  tmpDir: string;
  /**
   * Scratch folder of this run for the children compiled to JavaScript (lib/compile-js.ts): always
   * inside the repository (bench/results/tmp/, git-ignored), since their imports ('remit',
   * LangGraph) resolve through its node_modules, which a folder under an --out elsewhere cannot
   * reach (the resume and wasm-memory suites failed with ERR_MODULE_NOT_FOUND there).
   */
  codeDir: string;
  /** PostgreSQL URL from --pg; suites that have no PostgreSQL column yet report it as unavailable. */
  pgUrl: string | undefined;
  log: (message: string) => void;
}

export interface SuiteOutput {
  rows: ResultRow[];
  notes: string[];
  /** Charts this suite contributes: file name (without .svg) and spec. */
  charts: { file: string; spec: ChartSpec }[];
}

export type SuiteRunner = (ctx: SuiteContext) => Promise<SuiteOutput>;

export interface SuiteModule {
  name: SuiteName;
  run: SuiteRunner;
}

/** A fresh scratch file path; removes any leftover file and its WAL/SHM companions. */
export function freshDbPath(dir: string, name: string): string {
  const file = path.join(dir, name);
  removeDb(file);
  return file;
}

export function removeDb(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
}

/** Bytes the database occupies on disk: the main file plus any WAL left behind. */
export function dbBytesOnDisk(file: string): number {
  let total = 0;
  for (const suffix of ['', '-wal']) {
    try {
      total += fs.statSync(file + suffix).size;
    } catch {
      // absent companion file: nothing on disk
    }
  }
  return total;
}

/** Copy a closed database file (WAL checkpointed on close) so each sample starts from the same bytes. */
/**
 * Copy a database file (and its WAL) and flush the copy to disk before returning. A parked run in
 * service was written long before it is resumed; a copy still dirty in the page cache is not: on
 * ext4 (data=ordered) the resume's first durable commit would also write out the copy's dirty
 * pages, which made a fresh resume of a 13 MB file about 10 ms slower than of a 1 MB one.
 */
export function copyDb(from: string, to: string): void {
  removeDb(to);
  for (const suffix of ['', '-wal']) {
    if (suffix !== '' && !fs.existsSync(from + suffix)) continue;
    fs.copyFileSync(from + suffix, to + suffix);
    const fd = fs.openSync(to + suffix, 'r+');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
  const dir = fs.openSync(path.dirname(to), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}
