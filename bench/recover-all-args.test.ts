/**
 * bench/recover-all.ts checks its command line before any work: an unknown option, a value that is
 * not a whole number in range, a --pg that is not a postgres:// or postgresql:// URL or whose server
 * does not answer is refused on one line with exit code 2 (as bench/run.ts refuses one); --help prints the usage and exits 0.
 */

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const recoverAll = (args: string[]) => spawnSync('bash', [path.join(repoRoot, 'scripts', 'tsx.sh'), path.join(repoRoot, 'bench', 'recover-all.ts'), ...args], {
  encoding: 'utf8', timeout: 60_000,
});

describe('bench/recover-all.ts command line', () => {
  it.each([
    [['--bogus'], /^recover-all: Unknown option '--bogus' \(see --help\)$/],
    [['--completed', 'abc'], /^recover-all: --completed wants a whole number from 0 to 1000000, got "abc"/],
    [['--completed', '-1'], /^recover-all: --completed wants a whole number from 0 to 1000000, got "-1"/],
    [['--repeats', '0'], /^recover-all: --repeats wants a whole number from 1 to 1000, got "0"/],
    [['--running', '2.5'], /^recover-all: --running wants a whole number from 0 to 10000, got "2.5"/],
    [['--pg', 'http://x'], /^recover-all: --pg: expected a postgres:\/\/ or postgresql:\/\/ URL, got protocol "http:"/],
    // A server that does not answer is found before the SQLite cases, not after them.
    [['--pg', 'postgres://remit:remit@127.0.0.1:1/remit_test'], /^recover-all: --pg: cannot connect to PostgreSQL: .*ECONNREFUSED/],
  ])('%j: refused before any work, one line, exit 2', (args, message) => {
    const r = recoverAll(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(message)]);
  });

  it('--help prints the usage and exits 0 without running the benchmark', () => {
    const r = recoverAll(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: npx tsx bench\/recover-all\.ts \[options\]\n[\s\S]*--completed N[\s\S]*--pg URL/);
    expect(r.stdout).not.toMatch(/"store"/);
    expect(r.stderr).toBe('');
  });
});
