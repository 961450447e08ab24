/**
 * Effect sinks: stand-ins for an outside system that deduplicates by idempotency key (a payment
 * provider, a mail service). They count raw invocations and applied effects separately, which is
 * what the resume contract measures: a handler may be invoked again after a crash between the
 * outside effect and its durable completion, but the effect must be applied once.
 *
 * FileEffectSink is safe across processes and SIGKILL: "applied" is the atomic appearance of a
 * whole marker file named after the key (written under a name of its own, then hard-linked to
 * the key's name, which fails when it exists), so two processes invoking one key apply it once,
 * and a kill at any instant leaves either no marker or a whole one. Invocations are appended one
 * line each; what a kill cuts short is not read. Nothing is fsynced: a process crash loses no
 * written data (the page cache outlives the process); a power loss is not what it simulates.
 */

import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, linkSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArgumentInvalidError, OptionInvalidError } from '../errors.js';
import { ensureDirectory } from '../files.js';
import { allKeysOf, notKnown, unknownKey } from '../known-keys.js';

export interface EffectReceipt {
  /** True when this invocation applied the effect; false when the key was applied before. */
  applied: boolean;
  /** Stable per key: the same on a duplicate invocation (what a real provider returns). */
  receiptId: string;
}

export interface EffectSink {
  apply(effect: string, key: string, payload: unknown): Promise<EffectReceipt>;
  counts(): Promise<EffectCounts>;
}

export interface EffectCount {
  invocations: number;
  applied: number;
}

/** Per effect name; `byKey` counts applications per key (1 everywhere when exactly-once held). */
export interface EffectCounts {
  byEffect: Record<string, EffectCount>;
  byKey: Record<string, { effect: string; invocations: number; applied: number }>;
}

/**
 * The receipt id a sink answers for `key`. A key that is not a string is ArgumentInvalidError
 * (before, receiptIdFor(5) was Node's own TypeError ERR_INVALID_ARG_TYPE from the hash).
 */
export function receiptIdFor(key: string): string {
  return createHash('sha256').update(stringArgument('receiptIdFor(key)', 'a string (an idempotency key)', key)).digest('hex').slice(0, 16);
}

/** `value` when it is a string, else ArgumentInvalidError naming `argument`; `nonEmpty`: "" refused too. */
function stringArgument(argument: string, expected: string, value: unknown, nonEmpty = false): string {
  if (typeof value === 'string' && (!nonEmpty || value !== '')) return value;
  throw new ArgumentInvalidError(argument, expected, value === '' ? 'an empty string' : value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);
}

/** The effect name and key of an apply, checked before anything is counted or written. */
function checkApply(sink: string, effect: unknown, key: unknown): void {
  stringArgument(`${sink}.apply(effect)`, 'a string (the effect name)', effect);
  stringArgument(`${sink}.apply(key)`, 'a string (the idempotency key)', key);
}

/** The options of MemoryEffectSink. */
export interface MemoryEffectSinkOptions {
  /** false: apply every call, a canary (default true: apply once per key). */
  deduplicate?: boolean;
}

const MEMORY_SINK_OPTIONS = allKeysOf<MemoryEffectSinkOptions>()('deduplicate');

export class MemoryEffectSink implements EffectSink {
  private readonly invocations: Array<{ effect: string; key: string; applied: boolean }> = [];
  private readonly appliedKeys = new Map<string, unknown>();

  private readonly deduplicate: boolean;

  /**
   * `deduplicate: false` makes a sink that applies every call: a canary for the exactly-once
   * checks. Only an explicit `false` does: options without it (`{}`) deduplicate, as no options
   * do, and an option it does not know (`{ dedupe: false }`) is refused (OptionInvalidError), so
   * that a canary meant to apply every call is never silently a deduplicating sink, nor the reverse.
   */
  constructor(options: MemoryEffectSinkOptions = {}) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new ArgumentInvalidError('options', 'an object of MemoryEffectSink options ({ deduplicate }) or nothing', options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options);
    }
    const unknown = unknownKey(options, MEMORY_SINK_OPTIONS);
    if (unknown !== undefined) throw new OptionInvalidError(unknown, (options as Record<string, unknown>)[unknown], notKnown('an option of MemoryEffectSink', MEMORY_SINK_OPTIONS));
    if (options.deduplicate !== undefined && typeof options.deduplicate !== 'boolean') {
      throw new OptionInvalidError('deduplicate', options.deduplicate, 'must be true or false');
    }
    this.deduplicate = options.deduplicate !== false;
  }

  async apply(effect: string, key: string, payload: unknown): Promise<EffectReceipt> {
    checkApply('MemoryEffectSink', effect, key);
    const applied = !this.deduplicate || !this.appliedKeys.has(key);
    if (applied) this.appliedKeys.set(key, payload);
    this.invocations.push({ effect, key, applied });
    return { applied, receiptId: receiptIdFor(key) };
  }

  async counts(): Promise<EffectCounts> {
    return tally(this.invocations);
  }

  appliedPayload(key: string): unknown {
    return this.appliedKeys.get(key);
  }
}

/**
 * The marker's line for a call: its payload must be JSON text (the file keeps it), so one that is
 * not (a BigInt, a cycle) is ArgumentInvalidError naming the argument, before anything is written.
 */
function payloadLine(effect: string, key: string, payload: unknown): string {
  try {
    return JSON.stringify({ effect, key, payload }) + '\n';
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ArgumentInvalidError('FileEffectSink.apply(payload)', 'a value JSON.stringify can write (the sink keeps it in a file)', `a value it cannot: ${why}`);
  }
}

const MARKER = '.json';
const SCRATCH = '.partial';

export class FileEffectSink implements EffectSink {
  private readonly invocationsPath: string;
  private readonly appliedDir: string;

  /**
   * `dir`: the folder the sink keeps its files in, created when missing. One that is not a
   * non-empty string is ArgumentInvalidError (before, `new FileEffectSink()` was Node's own
   * TypeError ERR_INVALID_ARG_TYPE, and "" put the files in the working folder).
   */
  constructor(readonly dir: string, ...rest: never[]) {
    stringArgument('FileEffectSink(dir)', 'a non-empty string (the folder the sink keeps its files in)', dir, true);
    // It takes no options: `new FileEffectSink(dir, { deduplicate: false })` from JavaScript would
    // otherwise be a deduplicating sink where the test meant a canary that applies every call.
    if (rest.length > 0) throw new ArgumentInvalidError('FileEffectSink(dir)', 'the folder alone (the file sink takes no options and always deduplicates; MemoryEffectSink({ deduplicate: false }) applies every call)', `${rest.length + 1} arguments`);
    this.invocationsPath = join(dir, 'invocations.jsonl');
    this.appliedDir = join(dir, 'applied');
    // Not mkdirSync({ recursive: true }): on some paths it retries forever (../files.ts).
    ensureDirectory(this.appliedDir);
  }

  async apply(effect: string, key: string, payload: unknown): Promise<EffectReceipt> {
    checkApply('FileEffectSink', effect, key);
    const marker = join(this.appliedDir, receiptIdFor(key) + MARKER);
    // The marker appears whole or not at all: written under a name of this call's own, then linked
    // to its name, which fails if another call's is there. (Written in place, a SIGKILL between
    // the open and the write left an empty marker: counts() could not read it, and the retry
    // under the same key found it and reported "not applied" for an effect never recorded.)
    const line = payloadLine(effect, key, payload);
    const scratch = join(this.appliedDir, `${receiptIdFor(key)}.${process.pid}.${randomBytes(6).toString('hex')}${SCRATCH}`);
    writeFileSync(scratch, line, { flag: 'wx' });
    let applied = true;
    try {
      linkSync(scratch, marker);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      applied = false;
    } finally {
      unlinkSync(scratch);
    }
    appendFileSync(this.invocationsPath, JSON.stringify({ effect, key, applied, atMs: Date.now() }) + '\n');
    return { applied, receiptId: receiptIdFor(key) };
  }

  async counts(): Promise<EffectCounts> {
    const text = existsSync(this.invocationsPath) ? readFileSync(this.invocationsPath, 'utf8') : '';
    // A line a kill cut short during its append does not parse, nor the line appended after it,
    // which it runs into: neither is read (their calls' markers count them as applied).
    const invocations = text.split('\n').flatMap((line) => {
      if (line === '') return [];
      try {
        return [JSON.parse(line) as { effect: string; key: string; applied: boolean }];
      } catch {
        return [];
      }
    });
    const counts = tally(invocations);
    // The markers are the truth for "applied" (an invocation line may be missing after a SIGKILL
    // between the marker and the line); count them too and keep the larger number. A scratch file
    // left by a kill before its link is no marker.
    for (const file of readdirSync(this.appliedDir)) {
      if (!file.endsWith(MARKER)) continue;
      const { effect, key } = JSON.parse(readFileSync(join(this.appliedDir, file), 'utf8')) as { effect: string; key: string };
      const perKey = entryOf(counts.byKey, key, () => ({ effect, invocations: 0, applied: 0 }));
      if (perKey.applied === 0) {
        perKey.applied = 1;
        entryOf(counts.byEffect, effect, () => ({ invocations: 0, applied: 0 })).applied += 1;
      }
    }
    return counts;
  }
}

/**
 * `table[name]`, made an own property when missing. Not `table[name] ??= ...`: an effect or key
 * named `constructor`, `toString` or `__proto__` found the inherited member instead (an effect
 * named `constructor` was counted on the Object function and left out of the counts).
 */
function entryOf<T>(table: Record<string, T>, name: string, make: () => T): T {
  if (!Object.hasOwn(table, name)) Object.defineProperty(table, name, { value: make(), enumerable: true, writable: true, configurable: true });
  return table[name]!;
}

function tally(invocations: Array<{ effect: string; key: string; applied: boolean }>): EffectCounts {
  const byEffect: EffectCounts['byEffect'] = {};
  const byKey: EffectCounts['byKey'] = {};
  for (const inv of invocations) {
    const e = entryOf(byEffect, inv.effect, () => ({ invocations: 0, applied: 0 }));
    const k = entryOf(byKey, inv.key, () => ({ effect: inv.effect, invocations: 0, applied: 0 }));
    e.invocations += 1;
    k.invocations += 1;
    if (inv.applied) {
      e.applied += 1;
      k.applied += 1;
    }
  }
  return { byEffect, byKey };
}
