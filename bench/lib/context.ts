/** What every suite receives from bench/run.ts. */

import fs from 'node:fs';
import path from 'node:path';
import type { Profile } from './profile.js';
import type { ResultRow, SuiteName } from './results.js';
import type { ChartSpec } from './svg.js';

export interface SuiteContext {
  profile: Profile;
  repoRoot: string;
  /** Scratch folder for database files (bench/results/tmp/, git-ignored); emptied per suite. */
  tmpDir: string;
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
export function copyDb(from: string, to: string): void {
  removeDb(to);
  fs.copyFileSync(from, to);
  if (fs.existsSync(from + '-wal')) fs.copyFileSync(from + '-wal', to + '-wal');
}
