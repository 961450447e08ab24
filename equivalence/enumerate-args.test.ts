/**
 * enumerate.ts's command line: every bad option or value refused before any work (one line, the
 * usage line after it, exit 2), --help, and the invocations the READMEs document.
 */

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MAX_RECORDS_LIMIT, USAGE, parseEnumerateArgs } from './enumerate.js';
import { UsageError } from './fuzz.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const parse = (line: string) => parseEnumerateArgs(line.split(' ').filter(Boolean));
const command = (line: string) => parse(line) as Exclude<ReturnType<typeof parse>, 'help'>;

describe('enumerate command line', () => {
  it('defaults, and every option read', () => {
    expect(parse('')).toEqual({ maxRecords: 9, cuts: 'edges', against: 'wasm', formats: [2, 1], upgrades: true, oracle: false });
    expect(parse('--max-records 4 --cuts all --against reference --formats 1 --no-upgrades --oracle'))
      .toEqual({ maxRecords: 4, cuts: 'all', against: 'reference', formats: [1], upgrades: false, oracle: true });
    expect(command('--formats 1,2').formats).toEqual([1, 2]);
    expect(parse('--max-records=0')).toMatchObject({ maxRecords: 0 });
    expect(parse(`--max-records ${MAX_RECORDS_LIMIT}`)).toMatchObject({ maxRecords: MAX_RECORDS_LIMIT });
    expect(parse('--help')).toBe('help');
    expect(parse('-h')).toBe('help');
    expect(USAGE).toMatch(/--max-records N[\s\S]*--cuts[\s\S]*--formats/);
  });

  it.each([
    // The invocations of equivalence/README.md and proofs/README.md.
    '--max-records 10 --cuts all --formats 2,1 --no-upgrades',
    '--max-records 8',
    '--max-records 14 --formats 1 --no-upgrades',
    '--max-records 6 --against reference --oracle',
    '--max-records 9 --cuts edges --against reference --formats 2,1 --oracle',
  ])('accepts the documented %s', (line) => {
    expect(command(line).maxRecords).toBe(Number(line.split(' ')[1]));
  });

  it.each([
    ['--max-records abc', /--max-records wants a whole number from 0 to 20, got "abc"/],
    ['--max-records -1', /--max-records .*"-1"/],
    ['--max-records 2.5', /--max-records .*"2.5"/],
    ['--max-records 1e1', /--max-records .*"1e1"/],
    ['--max-records 21', /--max-records .*"21"/],
    ['--max-records', /--max-records/],
    ['--cuts weird', /--cuts wants one of edges, all, got "weird"/],
    ['--against jco', /--against .*"jco"/],
    ['--formats 3', /--formats wants one of 2,1 \| 1,2 \| 2 \| 1 .*"3"/],
    ['--formats 2,2', /--formats .*"2,2"/],
    ['--formats 2,', /--formats .*"2,"/],
    ['--bogus', /Unknown option '--bogus'/],
    ['--no-upgrades=yes', /no-upgrades/],
    ['stray', /stray/],
  ])('refuses %s', (line, message) => {
    expect(() => parse(line)).toThrow(UsageError);
    expect(() => parse(line)).toThrow(message);
    try {
      parse(line);
    } catch (e) {
      expect((e as Error).message).not.toContain('\n');
    }
  });
});

describe('enumerate.ts numbers', () => {
  it.each([[' 3'], ['3 '], ['']])('refuses --max-records %j (not a number as written)', (value) => {
    expect(() => parseEnumerateArgs(['--max-records', value])).toThrow(/--max-records wants a whole number from 0 to 20, got "/);
  });
});

describe('enumerate.ts run as a script', () => {
  const enumerate = (args: string[]) => spawnSync('bash', [path.join(repoRoot, 'scripts', 'tsx.sh'), path.join(repoRoot, 'equivalence', 'enumerate.ts'), ...args], {
    encoding: 'utf8', timeout: 60_000,
  });

  it.each([
    [['--max-records', 'abc'], /^enumerate: --max-records wants a whole number from 0 to 20, got "abc"$/],
    [['--bogus'], /^enumerate: Unknown option '--bogus'/],
    [['--formats', '3'], /^enumerate: --formats wants/],
  ])('%j: refused before any work, one line and the usage line, exit 2', (args, message) => {
    const r = enumerate(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(message);
    expect(lines[1]).toMatch(/^usage: bash scripts\/tsx\.sh equivalence\/enumerate\.ts \[--max-records N\]/);
  });

  it('--help prints the usage and exits 0 without enumerating', () => {
    const r = enumerate(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(USAGE);
    expect(r.stderr).toBe('');
  });
});
