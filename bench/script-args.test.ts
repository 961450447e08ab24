/**
 * The stand-alone scripts bench/resume-phases.ts, bench/warmup-trend.ts, bench/step-cost-regimes.ts
 * and bench/recovery-quick.ts check their command line before any work: `--help` prints the usage and
 * exits 0 (resume-phases and warmup-trend refused it as an unknown option; recovery-quick ignored
 * every argument and ran its whole benchmark); an unknown option or a bad value ("1e3", "0x10",
 * " 5", "" were taken as numbers, "abc" was refused without saying why) is refused on one line
 * naming it, with exit code 2.
 */

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const script = (name: string, args: string[]) => spawnSync('bash', [path.join(repoRoot, 'scripts', 'tsx.sh'), path.join(repoRoot, 'bench', `${name}.ts`), ...args], {
  encoding: 'utf8', timeout: 60_000,
});

describe('stand-alone bench scripts: command line', () => {
  it.each([
    ['resume-phases', ['--bogus'], /^resume-phases: Unknown option '--bogus' \(see --help\)$/],
    ['resume-phases', ['--nodes', '1e3'], /^resume-phases: --nodes wants a whole number of at least 1, got "1e3"/],
    ['resume-phases', ['--resumes', '1'], /^resume-phases: --resumes wants a whole number of at least 2, got "1"/],
    ['resume-phases', ['--sync', 'OFF'], /^resume-phases: --sync wants one of FULL, NORMAL, got "OFF"/],
    ['warmup-trend', ['extra'], /^warmup-trend: Unexpected argument 'extra'/],
    ['warmup-trend', ['--runs', ''], /^warmup-trend: --runs wants a whole number of at least 10, got ""/],
    ['warmup-trend', ['--runs', '-1'], /^warmup-trend: --runs wants a whole number of at least 10, got "-1"/],
    ['warmup-trend', ['--runs', '0x10'], /^warmup-trend: --runs wants a whole number of at least 10, got "0x10"/],
    ['warmup-trend', ['--runs', ' 50'], /^warmup-trend: --runs wants a whole number of at least 10, got " 50"/],
    ['warmup-trend', ['--case', 'gate'], /^warmup-trend: --case wants one of commit, effect, got "gate"/],
    ['recovery-quick', ['--bogus'], /^recovery-quick: Unknown option '--bogus' \(see --help\)$/],
    ['recovery-quick', ['--max-records', 'NaN'], /^recovery-quick: --max-records wants a whole number from 1000 to 1000000, got "NaN"/],
    ['recovery-quick', ['--max-records', '999'], /^recovery-quick: --max-records wants a whole number from 1000 to 1000000, got "999"/],
    ['recovery-quick', ['--max-records'], /^recovery-quick: Option '--max-records <value>' argument missing/],
    ['step-cost-regimes', ['--steps', '999'], /^step-cost-regimes: --steps wants a whole number of at least 1000, got "999"/],
    ['step-cost-regimes', ['--store', 'postgres'], /^step-cost-regimes: --store wants one of memory, sqlite, got "postgres"/],
  ])('%s %j: refused before any work, one line, exit 2', (name, args, message) => {
    const r = script(name, args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(message)]);
  });

  it.each([
    ['resume-phases', /--nodes N[\s\S]*--sync S[\s\S]*--processes N[\s\S]*--resumes N/],
    ['warmup-trend', /--case C[\s\S]*--sync S[\s\S]*--runs N/],
    ['recovery-quick', /--max-records N/],
    ['step-cost-regimes', /--loop L[\s\S]*--store S[\s\S]*--steps N[\s\S]*--runs N/],
  ])('%s --help prints the usage and exits 0 without running', (name, options) => {
    const r = script(name, ['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^usage: npx tsx bench/${name}\\.ts \\[options\\]\\n`));
    expect(r.stdout).toMatch(options);
    expect(r.stdout).not.toMatch(/records_per_s|preparing|median/);
    expect(r.stderr).toBe('');
  });
});
