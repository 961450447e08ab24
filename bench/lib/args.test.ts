import { describe, expect, it } from 'vitest';
import { UsageError, parseBenchArgs } from './args.js';

const root = '/repo';
const parse = (line: string, env: NodeJS.ProcessEnv = {}) => parseBenchArgs(['node', 'run.ts', ...line.split(' ').filter(Boolean)], root, env, { out: () => undefined, err: () => undefined });
const args = (line: string, env: NodeJS.ProcessEnv = {}) => {
  const a = parse(line, env);
  if (a === 'help') throw new Error('unexpected help');
  return a;
};

describe('bench command line', () => {
  it('defaults: every suite, bench/results, no PostgreSQL', () => {
    const a = args('');
    expect(a.suites).toHaveLength(7);
    expect(a.out).toBe('/repo/bench/results');
    expect(a.outGiven).toBe(false);
    expect(a.pgUrl).toBeUndefined();
  });
  it('--out elsewhere is marked as given; --suite lists are deduplicated', () => {
    const a = args('--out /tmp/b --suite recovery,gate --suite recovery');
    expect(a).toMatchObject({ out: '/tmp/b', outGiven: true, suites: ['recovery', 'gate'] });
  });
  it.each([
    ['--suite=', /empty suite name/],
    ['--suite recovery,', /empty suite name/],
    ['--suite nope', /unknown suite "nope".*recovery/],
    ['--suite', /argument missing/],
    ['--suite --out /tmp/o1', /--suite needs a value, got the option "--out"/],
    ['--out --suite recovery', /--out needs a value, got the option "--suite"/],
    ['--bogus', /unknown option '--bogus'/],
    ['--pg http://x --suite commit', /postgres:\/\/ or postgresql:\/\//],
    ['--pg notaurl', /not a URL/],
    ['--out=', /--out: empty folder name/],
  ])('refuses %s on one line', (line, message) => {
    expect(() => parse(line)).toThrow(UsageError);
    expect(() => parse(line)).toThrow(message);
  });
  it.each([[''], ['  ']])('refuses an --out of %j (it would resolve to the working directory)', (out) => {
    const argv = ['node', 'run.ts', '--out', out, '--suite', 'storage'];
    expect(() => parseBenchArgs(argv, root, {}, { out: () => undefined, err: () => undefined })).toThrow(/^--out: empty folder name/);
  });
  it('checks REMIT_PG_URL only when a PostgreSQL suite runs', () => {
    expect(() => parse('--suite commit', { REMIT_PG_URL: 'mysql://x' })).toThrow(/REMIT_PG_URL/);
    expect(args('--suite recovery', { REMIT_PG_URL: 'mysql://x' }).pgUrl).toBeUndefined();
    expect(args('--suite gate', { REMIT_PG_URL: 'postgresql://u@h/db' })).toMatchObject({ pgUrl: 'postgresql://u@h/db', pgFrom: 'REMIT_PG_URL' });
  });
  it('--suite and --full with --render are a note (nothing runs), not silently ignored', () => {
    expect(args('--render --suite resume --full').notes).toEqual(['--suite and --full ignored with --render (nothing runs; every suite of latest.json is rendered)']);
    expect(args('--render').notes).toEqual([]);
  });
  it('--pg with suites that do not use it is a note', () => {
    const a = args('--pg postgres://u@h/db --suite recovery');
    expect(a.pgUrl).toBeUndefined();
    expect(a.notes.join()).toMatch(/--pg is ignored/);
    expect(args('--pg postgres://u@h/db --suite commit').notes).toEqual([]);
  });
  it('--help lists the suites', () => {
    let text = '';
    expect(parseBenchArgs(['node', 'run.ts', '--help'], root, {}, { out: (s) => { text += s; }, err: () => undefined })).toBe('help');
    expect(text).toMatch(/recovery, resume, commit, gate, storage, step-cost, wasm-memory/);
  });
});
