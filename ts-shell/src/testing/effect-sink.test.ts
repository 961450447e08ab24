/**
 * FileEffectSink under SIGKILL: a kill at any instant of apply() leaves either no marker or a
 * whole one, so counts() reads every state a kill leaves, and each key is applied once. Before,
 * a kill between the marker's open and its write left an empty marker: counts() threw, and the
 * retry under the same key reported "not applied" for a call whose line was never written.
 */

import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FileEffectSink, MemoryEffectSink, receiptIdFor } from './effect-sink.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const tsxLoader = new URL('../../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

describe('FileEffectSink', () => {
  it('takes no options: a second argument is refused (from a review: { deduplicate: false } made a deduplicating sink without a word)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'remit-sink-'));
    expect(() => new (FileEffectSink as unknown as new (...args: unknown[]) => FileEffectSink)(dir, { deduplicate: false })).toThrow(
      expect.objectContaining({ code: 'REMIT_ARGUMENT_INVALID', message: expect.stringMatching(/the file sink takes no options and always deduplicates/) }),
    );
    expect(() => new FileEffectSink(dir)).not.toThrow();
  });

  it('reads the states a kill can leave: a scratch file never linked, a marker without its line, a line cut short', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'remit-sink-'));
    const sink = new FileEffectSink(dir);
    expect(await sink.apply('charge', 'k1', { n: 1 })).toMatchObject({ applied: true });
    // Killed after writing its scratch file, before the link: no marker, so not applied.
    writeFileSync(join(dir, 'applied', `${receiptIdFor('k2')}.123.abcdef.partial`), '{"effect":"charge","key":"k2"');
    // Killed after the link, before its invocation line: applied, counted from the marker.
    writeFileSync(join(dir, 'applied', `${receiptIdFor('k3')}.json`), JSON.stringify({ effect: 'charge', key: 'k3', payload: {} }) + '\n');
    // Killed in the middle of appending a line.
    appendFileSync(join(dir, 'invocations.jsonl'), '{"effect":"charge","key":"k4","appl');
    // Another process goes on appending after the cut line: the two run into one line.
    expect(await sink.apply('charge', 'k5', {})).toMatchObject({ applied: true });
    const counts = await sink.counts();
    expect(counts.byKey['k5']).toEqual({ effect: 'charge', invocations: 0, applied: 1 });
    expect(counts.byKey['k1']).toEqual({ effect: 'charge', invocations: 1, applied: 1 });
    expect(counts.byKey['k2']).toBeUndefined();
    expect(counts.byKey['k3']).toEqual({ effect: 'charge', invocations: 0, applied: 1 });
    expect(await sink.apply('charge', 'k2', {})).toMatchObject({ applied: true });
    expect(await sink.apply('charge', 'k3', {})).toMatchObject({ applied: false });
  });

  it('SIGKILLed at random instants of apply() in a loop: every marker whole, counts() reads them, each key applied once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'remit-sink-kill-'));
    const child = join(here, '..', '..', 'test-support', 'sink-hammer.child.ts');
    for (let kill = 0; kill < 8; kill++) {
      const proc = spawn(process.execPath, ['--conditions=remit-source', '--import', tsxLoader, child, dir, String(kill)], { stdio: ['ignore', 'pipe', 'inherit'] });
      // Killed once it is applying (its first line out), after a random further delay.
      await new Promise<void>((resolve) => proc.stdout.once('data', () => resolve()));
      await new Promise((r) => setTimeout(r, Math.random() * 40));
      proc.kill('SIGKILL');
      await new Promise((r) => proc.once('exit', r));
    }
    for (const file of readdirSync(join(dir, 'applied')).filter((f) => f.endsWith('.json'))) {
      expect(readFileSync(join(dir, 'applied', file), 'utf8')).toMatch(/^\{.*\}\n$/);
    }
    const counts = await new FileEffectSink(dir).counts();
    expect(Object.keys(counts.byKey).length).toBeGreaterThan(0);
    for (const [key, perKey] of Object.entries(counts.byKey)) {
      expect(perKey.applied, key).toBe(1);
      expect(existsSync(join(dir, 'applied', `${receiptIdFor(key)}.json`))).toBe(true);
    }
  }, 60_000);
});

describe('effect names and keys that are names of Object.prototype', () => {
  // Before, counts() looked them up with `table[name] ??= ...`: an effect named `constructor`
  // found the Object function, was counted on it (Object.invocations became NaN) and was missing
  // from byEffect; `__proto__` reached Object.prototype itself.
  const names = ['constructor', 'toString', '__proto__', 'hasOwnProperty'];
  const expected = { invocations: 2, applied: 1 };
  for (const [label, makeSink] of [
    ['MemoryEffectSink', () => new MemoryEffectSink()],
    ['FileEffectSink', () => new FileEffectSink(mkdtempSync(join(tmpdir(), 'remit-sink-')))],
  ] as const) {
    it(`${label} counts them as any other name`, async () => {
      const sink = makeSink();
      if (sink instanceof FileEffectSink) onTestFinished(() => rmSync(sink.dir, { recursive: true, force: true }));
      for (const name of names) {
        expect(await sink.apply(name, name, {})).toMatchObject({ applied: true });
        expect(await sink.apply(name, name, {})).toMatchObject({ applied: false });
      }
      const counts = await sink.counts();
      expect(Object.keys(counts.byEffect).sort()).toEqual([...names].sort());
      expect(Object.keys(counts.byKey).sort()).toEqual([...names].sort());
      for (const name of names) {
        expect(Object.hasOwn(counts.byEffect, name) && counts.byEffect[name]).toEqual(expected);
        expect(Object.hasOwn(counts.byKey, name) && counts.byKey[name]).toEqual({ effect: name, ...expected });
      }
      expect((Object as unknown as { invocations?: unknown }).invocations).toBeUndefined();
      expect(({} as { invocations?: unknown }).invocations).toBeUndefined();
    });
  }
});

describe('MemoryEffectSink options', () => {
  const twice = async (sink: MemoryEffectSink) => [(await sink.apply('e', 'k', 1)).applied, (await sink.apply('e', 'k', 1)).applied];

  it('deduplicates unless told deduplicate: false; options without it deduplicate too', async () => {
    // Before, `new MemoryEffectSink({})` applied every call (`!undefined`), unlike `new MemoryEffectSink()`.
    expect(await twice(new MemoryEffectSink())).toEqual([true, false]);
    expect(await twice(new MemoryEffectSink({}))).toEqual([true, false]);
    expect(await twice(new MemoryEffectSink({ deduplicate: true }))).toEqual([true, false]);
    expect(await twice(new MemoryEffectSink({ deduplicate: false }))).toEqual([true, true]);
  });

  it('refuses options it cannot use: an unknown key, a deduplicate that is not a boolean, options that are not an object', () => {
    // Before, { dedupe: false } (a misspelt canary) was ignored and the sink deduplicated.
    const refusal = (options: unknown) => {
      try {
        new MemoryEffectSink(options as never);
      } catch (error) {
        return { code: (error as { code?: unknown }).code, field: (error as { field?: unknown }).field };
      }
      return undefined;
    };
    expect(refusal({ dedupe: false })).toEqual({ code: 'REMIT_OPTION_INVALID', field: 'dedupe' });
    expect(refusal({ deduplicate: 'no' })).toEqual({ code: 'REMIT_OPTION_INVALID', field: 'deduplicate' });
    expect(refusal({ deduplicate: 0 })).toEqual({ code: 'REMIT_OPTION_INVALID', field: 'deduplicate' });
    expect(refusal(null)).toEqual({ code: 'REMIT_ARGUMENT_INVALID', field: undefined });
    expect(refusal(false)).toEqual({ code: 'REMIT_ARGUMENT_INVALID', field: undefined });
  });
});

describe('arguments the sinks cannot use', () => {
  // Before, receiptIdFor(5) and new FileEffectSink() were Node's own TypeError ERR_INVALID_ARG_TYPE
  // (from the hash and from path.join), and MemoryEffectSink.apply('e', 5) counted the call first.
  const refusal = async (call: () => unknown) => {
    try {
      await call();
    } catch (error) {
      const e = error as { name?: unknown; code?: unknown; argument?: unknown; received?: unknown };
      return { name: e.name, code: e.code, argument: e.argument, received: e.received };
    }
    return undefined;
  };
  const refused = (argument: string, received: string) => ({ name: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID', argument, received });

  it('receiptIdFor refuses a key that is not a string', async () => {
    expect(await refusal(() => receiptIdFor(5 as never))).toEqual(refused('receiptIdFor(key)', 'number'));
    expect(await refusal(() => receiptIdFor(undefined as never))).toEqual(refused('receiptIdFor(key)', 'undefined'));
    expect(await refusal(() => receiptIdFor(null as never))).toEqual(refused('receiptIdFor(key)', 'null'));
    expect(receiptIdFor('')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('FileEffectSink refuses a dir that is not a non-empty string', async () => {
    expect(await refusal(() => new (FileEffectSink as unknown as new () => FileEffectSink)())).toEqual(refused('FileEffectSink(dir)', 'undefined'));
    expect(await refusal(() => new FileEffectSink(5 as never))).toEqual(refused('FileEffectSink(dir)', 'number'));
    expect(await refusal(() => new FileEffectSink(''))).toEqual(refused('FileEffectSink(dir)', 'an empty string'));
  });

  it('apply refuses an effect name or key that is not a string, counting and writing nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'remit-sink-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    for (const [label, sink] of [['MemoryEffectSink', new MemoryEffectSink()], ['FileEffectSink', new FileEffectSink(dir)]] as const) {
      expect(await refusal(() => sink.apply('e', 5 as never, {}))).toEqual(refused(`${label}.apply(key)`, 'number'));
      expect(await refusal(() => sink.apply(null as never, 'k', {}))).toEqual(refused(`${label}.apply(effect)`, 'null'));
      expect(await sink.counts()).toEqual({ byEffect: {}, byKey: {} });
    }
    expect(readdirSync(join(dir, 'applied'))).toEqual([]);
  });

  it('FileEffectSink.apply refuses a payload JSON cannot write (a BigInt, a cycle), writing nothing; the key applies afterwards', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'remit-sink-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const sink = new FileEffectSink(dir);
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    for (const payload of [{ amount: 10n }, cyclic]) {
      const refused = await refusal(() => sink.apply('e', 'k', payload));
      expect(refused).toMatchObject({ name: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID', argument: 'FileEffectSink.apply(payload)' });
    }
    expect(readdirSync(join(dir, 'applied'))).toEqual([]);
    expect(await sink.counts()).toEqual({ byEffect: {}, byKey: {} });
    expect((await sink.apply('e', 'k', { amount: 10 })).applied).toBe(true);
  });
});
