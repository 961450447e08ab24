/**
 * The command line of the stand-alone bench scripts (resume-phases.ts, warmup-trend.ts,
 * step-cost-regimes.ts, recovery-quick.ts, recover-all.ts), read strictly before any work: `--help` prints the usage and exits 0; an
 * unknown option, a missing value, a stray argument or a bad value is refused on one line,
 * `SCRIPT: what (see --help)`, with exit code 2.
 */

import { parseArgs } from 'node:util';

/** Print `SCRIPT: message (see --help)` on stderr and exit 2. */
export function refuseUsage(script: string, message: string): never {
  process.stderr.write(`${script}: ${message} (see --help)\n`);
  process.exit(2);
}

/** What readScriptArgs read: a string for each option with a default, a string or undefined for the others. */
export type ScriptArgs<D extends Record<string, string | undefined>> = { [K in keyof D]: D[K] extends string ? string : string | undefined };

/**
 * Valued options (each with its default, as written on the command line, or undefined for an
 * option without one) and --help. A negative number after an option is its value, so that the
 * option's own check refuses it by name.
 */
export function readScriptArgs<D extends Record<string, string | undefined>>(script: string, usage: string, defaults: D, argv: string[] = process.argv.slice(2)): ScriptArgs<D> {
  const names = new Set(Object.keys(defaults).map((k) => `--${k}`));
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (names.has(argv[i]!) && /^-\d/.test(argv[i + 1] ?? '')) args.push(`${argv[i]}=${argv[++i]}`);
    else args.push(argv[i]!);
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(Object.entries(defaults).map(([k, d]) => [k, d === undefined ? { type: 'string' as const } : { type: 'string' as const, default: d }]));
    values = parseArgs({ args, strict: true, allowPositionals: false, options: { ...options, help: { type: 'boolean', short: 'h' } } }).values;
  } catch (error) {
    return refuseUsage(script, (error as Error).message.split('\n')[0]!);
  }
  if (values['help']) {
    process.stdout.write(usage.endsWith('\n') ? usage : `${usage}\n`);
    process.exit(0);
  }
  return values as ScriptArgs<D>;
}

/** A whole number written in decimal digits ("1e3", "0x10", "1.5", " 5" and "" are refused), from `min` to `max`. */
export function wholeOption(script: string, name: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  return n >= min && n <= max ? n : refuseUsage(script, `--${name} wants a whole number ${max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`}, got "${value}"`);
}

/** One of `allowed`, or refused by name. */
export function choiceOption<T extends string>(script: string, name: string, value: string, allowed: readonly T[]): T {
  return (allowed as readonly string[]).includes(value) ? (value as T) : refuseUsage(script, `--${name} wants one of ${allowed.join(', ')}, got "${value}"`);
}
