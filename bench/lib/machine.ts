/** What the numbers were measured on: hardware, runtime, package versions, source revision. */

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface MachineDescription {
  cpu_model: string;
  cpu_cores: number;
  cpu_mhz: number;
  memory_bytes: number;
  os_platform: string;
  os_release: string;
  arch: string;
  node_version: string;
  v8_version: string;
  /** One-, five- and fifteen-minute load averages when the run started (other work on the machine). */
  load_avg_at_start: number[];
  load_avg_at_end: number[];
  packages: Record<string, string>;
  git_commit: string;
  /** True when the work tree had uncommitted changes: the numbers are then for code not in git_commit. */
  git_dirty: boolean;
  sqlite_version: string;
}

const PACKAGES = [
  'tinybench', 'better-sqlite3', '@langchain/langgraph', '@langchain/langgraph-checkpoint',
  '@langchain/langgraph-checkpoint-sqlite', '@langchain/core', 'tsx', 'typescript', '@bytecodealliance/jco',
];

function packageVersion(repoRoot: string, name: string): string {
  try {
    const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'node_modules', name, 'package.json'), 'utf8'));
    return String(manifest.version);
  } catch {
    return 'not installed';
  }
}

function git(repoRoot: string, args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

export function describeMachine(repoRoot: string, sqliteVersion: string): MachineDescription {
  const cpus = os.cpus();
  const packages: Record<string, string> = {};
  for (const name of PACKAGES) packages[name] = packageVersion(repoRoot, name);
  return {
    cpu_model: cpus[0]?.model ?? 'unknown',
    cpu_cores: cpus.length,
    cpu_mhz: cpus[0]?.speed ?? 0,
    memory_bytes: os.totalmem(),
    os_platform: os.platform(),
    os_release: os.release(),
    arch: os.arch(),
    node_version: process.version,
    v8_version: process.versions.v8,
    load_avg_at_start: os.loadavg().map((x) => Math.round(x * 100) / 100),
    load_avg_at_end: [],
    packages,
    git_commit: git(repoRoot, ['rev-parse', 'HEAD']) || 'unknown',
    git_dirty: git(repoRoot, ['status', '--porcelain']).length > 0,
    sqlite_version: sqliteVersion,
  };
}
