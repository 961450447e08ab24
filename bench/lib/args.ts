/** The command line of bench/run.ts, checked before any suite runs (./args.test.ts). */

import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { SUITE_NAMES, type SuiteName } from './results.js';

/** The suites that have PostgreSQL rows (bench/postgres.ts); the others ignore --pg. */
export const PG_SUITES: readonly SuiteName[] = ['commit', 'gate'];

/** A bad command line: bench/run.ts prints it on one line and exits 2. */
export class UsageError extends Error {}

export interface BenchArgs {
  full: boolean;
  suites: SuiteName[];
  /** Absolute output folder. */
  out: string;
  /** Whether --out was given (then nothing is written inside the repository). */
  outGiven: boolean;
  pgUrl: string | undefined;
  /** Where pgUrl came from. */
  pgFrom: '--pg' | 'REMIT_PG_URL' | null;
  render: boolean;
  /** Things to tell the user (e.g. --pg given to suites that do not use it). */
  notes: string[];
}

/** Refuse a URL that is not postgres:// or postgresql:// (the message names where it came from). */
export function checkPgUrl(url: string, from: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${from}: not a URL: "${url}" (expected postgres://user@host:port/db)`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new UsageError(`${from}: expected a postgres:// or postgresql:// URL, got protocol "${parsed.protocol}"`);
  }
}

/** One connection to the PostgreSQL server before any case runs: a wrong URL or a server that does not answer fails here, not after the SQLite cases. */
export async function checkPgConnection(url: string, from: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (e) {
    throw new UsageError(`${from}: cannot connect to PostgreSQL: ${String((e as Error)?.message ?? e).split('\n')[0]}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The options that take a value. */
const VALUE_OPTIONS = ['--suite', '--out', '--pg'];

/**
 * Parse `argv` (process.argv: node and script first). Throws UsageError for an unknown suite, an
 * empty --suite, a malformed PostgreSQL URL; `'help'` when commander printed the help.
 */
export function parseBenchArgs(
  argv: string[], repoRoot: string, env: NodeJS.ProcessEnv = process.env,
  write: { out: (s: string) => void; err: (s: string) => void } = { out: (s) => process.stdout.write(s), err: () => undefined },
): BenchArgs | 'help' {
  const defaultOut = path.join(repoRoot, 'bench', 'results');
  const program = new Command()
    .name('bench')
    .exitOverride()
    .configureOutput({ writeOut: write.out, writeErr: write.err })
    .option('--full', 'full profile (all sizes, more samples)', false)
    .option('--suite <names>', `comma-separated suites to run (default: all): ${SUITE_NAMES.join(', ')}`, (v: string, prev: string[]) => prev.concat(v.split(',')), [] as string[])
    .option('--out <dir>', 'output folder (default: bench/results; any other folder leaves the repository alone, scratch files included, but for the resume and wasm-memory suites\' compiled children, in bench/results/tmp/ while they run)')
    .option('--pg <url>', `PostgreSQL URL for the ${PG_SUITES.join(' and ')} suites (default: $REMIT_PG_URL)`)
    .option('--render', 'run nothing: re-evaluate the targets of latest.json in --out and rewrite latest.md (and this README block)', false)
    .addHelpText('after', `\nSuites: ${SUITE_NAMES.join(', ')} (PostgreSQL rows: ${PG_SUITES.join(', ')}).`);
  // `--suite --out DIR` took "--out" for the suite's value and DIR for an extra argument, and said
  // only "too many arguments": an option where a value belongs is named first.
  for (const [i, token] of argv.entries()) {
    const next = argv[i + 1];
    if (i >= 2 && VALUE_OPTIONS.includes(token) && next !== undefined && next.startsWith('--')) throw new UsageError(`${token} needs a value, got the option "${next}"`);
  }
  try {
    program.parse(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return 'help';
      throw new UsageError(e.message.replace(/^error: /, '').split('\n')[0]!);
    }
    throw e;
  }
  const opts = program.opts<{ full: boolean; suite: string[]; out?: string; pg?: string; render: boolean }>();
  const given = opts.suite.map((s) => s.trim());
  if (given.some((s) => s === '')) throw new UsageError(`--suite: empty suite name in "${opts.suite.join(',')}": expected one or more of ${SUITE_NAMES.join(', ')}`);
  for (const s of given) {
    if (!SUITE_NAMES.includes(s as SuiteName)) throw new UsageError(`unknown suite "${s}": expected one of ${SUITE_NAMES.join(', ')}`);
  }
  const suites = given.length === 0 ? [...SUITE_NAMES] : [...new Set(given as SuiteName[])];
  const fromEnv = env['REMIT_PG_URL'] || undefined;
  const pgUrl = opts.pg ?? fromEnv;
  const pgFrom = opts.pg !== undefined ? '--pg' : fromEnv !== undefined ? 'REMIT_PG_URL' : null;
  const notes: string[] = [];
  const usesPg = !opts.render && suites.some((s) => PG_SUITES.includes(s));
  if (pgUrl !== undefined && pgFrom !== null && (usesPg || pgFrom === '--pg')) checkPgUrl(pgUrl, pgFrom);
  if (opts.render && (opts.suite.length > 0 || opts.full)) notes.push(`${[opts.suite.length > 0 ? '--suite' : '', opts.full ? '--full' : ''].filter(Boolean).join(' and ')} ignored with --render (nothing runs; every suite of latest.json is rendered)`);
  if (opts.pg !== undefined && !usesPg) {
    notes.push(opts.render
      ? '--pg is ignored with --render (nothing runs)'
      : `--pg is ignored: only the ${PG_SUITES.join(' and ')} suites use PostgreSQL, and this run has ${suites.join(', ')}`);
  }
  // path.resolve('') is the working directory: an empty --out would write the results (and the
  // scratch databases) into whatever folder the command was started in, the repository's root included.
  if (opts.out !== undefined && opts.out.trim() === '') throw new UsageError(`--out: empty folder name "${opts.out}"`);
  const out = path.resolve(opts.out ?? defaultOut);
  return {
    full: opts.full, suites, out, outGiven: opts.out !== undefined && out !== defaultOut,
    pgUrl: usesPg ? pgUrl : undefined, pgFrom: usesPg ? pgFrom : null, render: opts.render, notes,
  };
}
