/**
 * Command-line options of the equivalence scripts (fuzz.ts, enumerate.ts), read strictly: an
 * unknown option, a missing value, a stray argument or a value out of range is a UsageError on one
 * line, which the script prints before exiting with code 2, before any work.
 */

import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A bad command line: the script prints the message on one line and exits 2. */
export class UsageError extends Error {}

/** What {@link parseStrict} read: a string for a valued option, true for a flag, undefined when absent. */
export type OptionValues = Record<string, string | boolean | undefined>;

/**
 * node:util parseArgs, strict: an unknown option, a missing value or a positional argument is a
 * UsageError on one line. A negative number after a valued option is its value (parseArgs refuses
 * `--seed -5` as ambiguous), so that the option's own check names it.
 */
export function parseStrict(argv: readonly string[], options: NonNullable<ParseArgsConfig['options']>): OptionValues {
  const valued = new Set(Object.entries(options).filter(([, o]) => o.type === 'string').map(([name]) => `--${name}`));
  const args = argv.flatMap((a, i) => (valued.has(a) && /^-\d/.test(argv[i + 1] ?? '') ? [`${a}=${argv[i + 1]}`] : i > 0 && valued.has(argv[i - 1]!) && /^-\d/.test(a) ? [] : [a]));
  try {
    return parseArgs({ args, strict: true, allowPositionals: false, options }).values as OptionValues;
  } catch (e) {
    throw new UsageError(`${(e as Error).message.split('\n')[0]} (see --help)`);
  }
}

/**
 * A whole-number option: `fallback` when absent (NaN: "not given"), else an integer from `min` to
 * `max` written in decimal, or a UsageError `--NAME wants WHAT, got "VALUE"`.
 */
export function intOption(values: OptionValues, name: string, range: { min: number; max?: number }, fallback: number, what: string): number {
  const v = values[name];
  if (typeof v !== 'string') return fallback;
  // Digits only, no blanks: Number(' 5') is 5, but ' 5' is not how the option is written.
  const n = /^[+-]?\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < range.min || n > (range.max ?? Number.MAX_SAFE_INTEGER)) throw new UsageError(`--${name} wants ${what}, got "${v}"`);
  return n;
}

/** An option with a fixed set of values: `fallback` when absent, else one of `allowed` or a UsageError. */
export function choiceOption<T extends string, F extends T | null>(values: OptionValues, name: string, allowed: readonly T[], fallback: F): T | F {
  const v = values[name];
  if (typeof v !== 'string') return fallback;
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`--${name} wants one of ${allowed.join(', ')}, got "${v}"`);
  return v as T;
}
