/**
 * Results documents for the bench's own tests (targets, rendering, merging): a fixed machine and a
 * document of some suites' rows. Imported by *.test.ts only; no suite or script imports it.
 */

import type { ResultRow, ResultsDocument, SuiteReport } from './results.js';

/** A machine line with fixed values; `commit` names the run's git commit. */
export function testMachine(commit = 'abc', load: [number, number] = [0, 0]): ResultsDocument['machine'] {
  return {
    cpu_model: 'cpu', cpu_cores: 2, cpu_mhz: 0, memory_bytes: 2 ** 30, os_platform: 'linux', os_release: 'r', arch: 'x64',
    node_version: 'v20', v8_version: 'v8', load_avg_at_start: [load[0]], load_avg_at_end: [load[1]], packages: {}, git_commit: commit,
    git_dirty: false, sqlite_version: '3',
  };
}

/** A quick-profile document in which suite `name` measured `rows` (no suite at all without a name). */
export function documentOf(name?: SuiteReport['name'], rows: ResultRow[] = []): ResultsDocument {
  return {
    schema: 'remit-bench/1', profile: 'quick', started_at: 't', finished_at: 't', duration_s: 1, command: 'c', machine: testMachine(),
    suites: name === undefined ? [] : [{ name, status: 'measured', duration_s: 1, notes: [], rows }], targets: [],
  };
}
