import { describe, expect, it, vi } from 'vitest';
import { createCore } from './index.js';
import { encodeLog } from './codec.js';
import { encodeAdmissionRequest } from './encoding.js';
import { reference } from './reference-core.js';
import { RecordKind, RefusalReason, type LogRecord } from './types.js';
import { ArgumentInvalidError, CoreUnavailableError, OptionInvalidError } from '../errors.js';
import { readFile } from 'node:fs/promises';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  canonicalAbiExports, CoreOutOfMemoryError, CoreTrapError, loadWasmCore, RENEW_INSTANCE_ABOVE_BYTES, RENEW_INSTANCE_AFTER_IDLE_MS, wasmCoreFromExports, wasmCoreModuleUrl, type CoreModuleExports,
} from './wasm-core.js';

const t = (s: string) => new TextEncoder().encode(s);
const log = encodeLog([
  {
    kind: RecordKind.RUN_STARTED, seq: 0, runId: t('r'), workflow: t('w'), version: t('1'), fingerprint: t(''), definition: t(''),
    nodes: [{ name: t('i'), kind: 3 }], startNode: t('i'), state: t('{}'),
  },
  { kind: RecordKind.INTERRUPT_PARKED, seq: 1, node: t('i'), interruptId: t('x') },
] as LogRecord[]);

describe('createCore', () => {
  it("'reference' needs no build", async () => {
    expect((await createCore('reference')).name).toBe('reference');
  });
  it('rejects an unknown kind by name', async () => {
    await expect(createCore('rust' as 'wasm')).rejects.toThrow(/unknown core kind "rust"/);
  });
});

describe('loadWasmCore', () => {
  it('compiles the core module once per process and URL: a later load instantiates it; a module that failed is not kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'remit-core-once-'));
    try {
      const moduleUrl = pathToFileURL(join(dir, 'remit_core.js')).href;
      const wasmFile = join(dir, 'remit_core.core.wasm');
      copyFileSync(new URL('./remit_core.core.wasm', wasmCoreModuleUrl()), wasmFile);
      const first = await loadWasmCore(moduleUrl);
      // The file replaced by bytes that do not compile: the second load does not read it again.
      writeFileSync(wasmFile, new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]));
      const second = await loadWasmCore(moduleUrl);
      expect(second).not.toBe(first);
      expect(second.recover(log)).toEqual(first.recover(log));
      // Another URL holding those bytes fails, and is tried again (not kept) at its next load.
      const otherUrl = pathToFileURL(join(dir, 'other', 'remit_core.js')).href;
      mkdirSync(join(dir, 'other'));
      writeFileSync(join(dir, 'other', 'remit_core.core.wasm'), new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]));
      await expect(loadWasmCore(otherUrl)).rejects.toMatchObject({ reason: 'WASM_LOAD_FAILED' });
      copyFileSync(new URL('./remit_core.core.wasm', wasmCoreModuleUrl()), join(dir, 'other', 'remit_core.core.wasm'));
      expect((await loadWasmCore(otherUrl)).recover(log)).toEqual(first.recover(log));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('says "run npm run setup" with a typed error when the build is missing', async () => {
    const missing = new URL('./no-such-dir/remit_core.js', import.meta.url);
    const err = await loadWasmCore(missing.href).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CoreUnavailableError);
    expect(err).toMatchObject({ reason: 'WASM_NOT_BUILT' });
    expect((err as Error).message).toMatch(/npm run setup/);
  });
  it('refuses a module URL that is not one with ArgumentInvalidError, after the options', async () => {
    const uncalled = await loadWasmCore(wasmCoreModuleUrl as never).catch((e: unknown) => e);
    expect(uncalled).toBeInstanceOf(ArgumentInvalidError);
    expect((uncalled as Error).message).toMatch(/^loadWasmCore\(moduleUrl\) must be a file: URL .*; got a function \(wasmCoreModuleUrl: call it\)$/);
    // Not a file: URL: the core's .wasm is read from the module's folder on disk (a data: URL was
    // Node's bare "Invalid URL", an http: one "missing: install @remit/core-wasm").
    for (const url of ['data:application/wasm;base64,AGFzbQEAAAA=', 'http://127.0.0.1:1/x.wasm', new URL('https://example.com/remit_core.js')]) {
      await expect(loadWasmCore(url)).rejects.toMatchObject({ name: 'ArgumentInvalidError', argument: 'loadWasmCore(moduleUrl)', received: expect.stringMatching(/^a (data|http|https): URL/) });
    }
    await expect(loadWasmCore('./wasm/pkg/remit_core.js')).rejects.toThrow(/got "\.\/wasm\/pkg\/remit_core\.js", which is not a URL \(for a path: pathToFileURL\(path\)\)/);
    await expect(loadWasmCore(null as never)).rejects.toThrow(/got null$/);
    await expect(loadWasmCore('not a url', { bindng: 'jco' } as never)).rejects.toBeInstanceOf(OptionInvalidError);
    const missing = new URL('./no-such-dir/remit_core.js', import.meta.url);
    await expect(loadWasmCore(missing)).rejects.toMatchObject({ reason: 'WASM_NOT_BUILT' });
  });
  it('refuses an unknown option key or binding with OptionInvalidError, before loading anything', async () => {
    const missing = new URL('./no-such-dir/remit_core.js', import.meta.url).href;
    const typo = await loadWasmCore(missing, { binding: 'canonical_abi' as 'jco' }).catch((e: unknown) => e);
    expect(typo).toBeInstanceOf(OptionInvalidError);
    expect(typo).toMatchObject({ option: 'binding', code: 'REMIT_OPTION_INVALID' });
    expect((typo as Error).message).toMatch(/"canonical-abi" or "jco"/);
    const key = await loadWasmCore(missing, { bindng: 'jco' } as never).catch((e: unknown) => e);
    expect(key).toBeInstanceOf(OptionInvalidError);
    expect(key).toMatchObject({ option: 'bindng' });
    expect((key as Error).message).toMatch(/is not an option of loadWasmCore \(known: binding\)/);
    const inherited = await loadWasmCore(missing, Object.create({ bindings: 'jco' }) as never).catch((e: unknown) => e);
    expect(inherited).toMatchObject({ option: 'bindings' });
    await expect(loadWasmCore(missing, null as never)).rejects.toBeInstanceOf(OptionInvalidError);
    await expect(loadWasmCore(missing, { binding: undefined })).rejects.toMatchObject({ reason: 'WASM_NOT_BUILT' });
  });
});

describe('the canonical-ABI binding: only a trap disables the instance', () => {
  /** A fake core module over a small memory: recover returns an empty list; `behaviour` says what goes wrong. */
  function fakeModule(behaviour: { reallocAt?: number; recoverThrows?: Error; outOfMemory?: boolean; resets?: number[] }): CoreModuleExports {
    const memory = { buffer: new ArrayBuffer(64) };
    const ret = 32;
    const call = () => {
      if (behaviour.recoverThrows !== undefined) throw behaviour.recoverThrows;
      new DataView(memory.buffer).setUint32(ret, 0, true);
      new DataView(memory.buffer).setUint32(ret + 4, 0, true);
      return ret;
    };
    const reset = () => { behaviour.resets?.push(1); };
    return {
      memory, cabi_realloc: () => behaviour.reallocAt ?? 8, recover: call, admit: call, feed: call, 'admit-from': call,
      cabi_post_recover: reset, cabi_post_admit: reset, cabi_post_feed: reset, 'cabi_post_admit-from': reset,
      'out-of-memory': () => (behaviour.outOfMemory === true ? 1 : 0),
    };
  }
  const WasmRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: new (m: string) => Error } }).WebAssembly.RuntimeError;
  it('an argument that does not fit in linear memory is a RangeError, and the next call works', () => {
    const behaviour: { reallocAt?: number } = { reallocAt: 60 };
    const exports = canonicalAbiExports(fakeModule(behaviour));
    expect(() => exports.recover(new Uint8Array(16))).toThrow(RangeError);
    expect(() => exports.feed(new Uint8Array(2), new Uint8Array(16))).toThrow(/does not fit/);
    behaviour.reallocAt = 8;
    expect(exports.recover(new Uint8Array(16))).toEqual(new Uint8Array(0));
  });
  it('an argument list that finds no room (cabi_realloc answers 0) is CoreOutOfMemoryError before the guest runs: the arena is reset, the instance kept', () => {
    const behaviour: { reallocAt?: number; resets: number[] } = { reallocAt: 0, resets: [] };
    const module = fakeModule(behaviour);
    module.feed = () => { throw new Error('the guest was entered'); };
    const exports = canonicalAbiExports(module);
    const error = (() => { try { exports.feed(new Uint8Array(2), new Uint8Array(16)); } catch (e) { return e; } })();
    expect(error).toBeInstanceOf(CoreOutOfMemoryError);
    expect(error).toMatchObject({ operation: 'feed', argumentBytes: 18, memoryBytes: 64, coreUsable: true });
    expect(behaviour.resets).toHaveLength(1);
    // Address 0 was never written: the argument did not go over the module's stack and data.
    expect(new Uint8Array(module.memory.buffer).every((b) => b === 0)).toBe(true);
    behaviour.reallocAt = 8;
    expect(exports.recover(new Uint8Array(16))).toEqual(new Uint8Array(0));
    // An empty list needs no room: 0 is not taken for a failure there.
    behaviour.reallocAt = 0;
    expect(exports.recover(new Uint8Array(0))).toEqual(new Uint8Array(0));
  });
  it('a trap for want of memory is CoreOutOfMemoryError and the binding goes on with a fresh instance; without one it is disabled', () => {
    const trap = new WasmRuntimeError('unreachable');
    const made: CoreModuleExports[] = [];
    const exhausted = fakeModule({ recoverThrows: trap, outOfMemory: true });
    const exports = canonicalAbiExports(exhausted, () => { const fresh = fakeModule({}); made.push(fresh); return fresh; });
    expect(() => exports.recover(new Uint8Array(4))).toThrow(CoreOutOfMemoryError);
    expect(made).toHaveLength(1);
    exhausted.admit = () => { throw new Error('the trapped instance was entered again'); };
    expect(exports.admit(new Uint8Array(4), new Uint8Array(1))).toEqual(new Uint8Array(0));
    for (const renew of [undefined, () => { throw new RangeError('WebAssembly.Instance(): Out of memory'); }]) {
      const alone = canonicalAbiExports(fakeModule({ recoverThrows: trap, outOfMemory: true }), renew);
      const error = (() => { try { alone.recover(new Uint8Array(4)); } catch (e) { return e; } })();
      expect(error).toMatchObject({ name: 'CoreOutOfMemoryError', operation: 'recover', coreUsable: false, cause: trap });
      expect(() => alone.recover(new Uint8Array(4))).toThrow(/trapped earlier/);
    }
  });
  it('an answer the host has no memory to copy out is CoreOutOfMemoryError: the arena is reset and the instance kept', () => {
    const behaviour: { resets: number[] } = { resets: [] };
    const exports = canonicalAbiExports(fakeModule(behaviour), () => { throw new Error('no fresh instance is needed'); });
    const slice = vi.spyOn(Uint8Array.prototype, 'slice').mockImplementationOnce(() => { throw new RangeError('Array buffer allocation failed'); });
    try {
      const error = (() => { try { exports.feed(new Uint8Array(2), new Uint8Array(4)); } catch (e) { return e; } })();
      expect(error).toMatchObject({ name: 'CoreOutOfMemoryError', operation: 'feed', argumentBytes: 6, coreUsable: true });
      expect((error as Error).cause).toBeInstanceOf(RangeError);
    } finally {
      slice.mockRestore();
    }
    expect(behaviour.resets).toHaveLength(1);
    expect(exports.recover(new Uint8Array(4))).toEqual(new Uint8Array(0));
    expect(behaviour.resets).toHaveLength(2);
  });
  it('a trap whose arena found room is a bug: disabled, whatever the memory', () => {
    const made: CoreModuleExports[] = [];
    const module = fakeModule({ recoverThrows: new WasmRuntimeError('unreachable') });
    const exports = canonicalAbiExports(module, () => { const fresh = fakeModule({}); made.push(fresh); return fresh; });
    expect(() => exports.recover(new Uint8Array(4))).toThrow(WasmRuntimeError);
    expect(() => exports.recover(new Uint8Array(4))).toThrow(/trapped earlier/);
    expect(made).toHaveLength(0);
    // A module built before the export: a trap is a trap.
    const older = fakeModule({ recoverThrows: new WasmRuntimeError('unreachable'), outOfMemory: true });
    delete older['out-of-memory'];
    const olderExports = canonicalAbiExports(older, () => fakeModule({}));
    expect(() => olderExports.recover(new Uint8Array(4))).toThrow(WasmRuntimeError);
    expect(() => olderExports.recover(new Uint8Array(4))).toThrow(/trapped earlier/);
  });
  it('a RuntimeError or any error while the guest runs disables it for good', () => {
    for (const error of [new WasmRuntimeError('unreachable'), new Error('thrown by the guest')]) {
      const behaviour: { recoverThrows?: Error } = { recoverThrows: error };
      const exports = canonicalAbiExports(fakeModule(behaviour));
      expect(() => exports.recover(new Uint8Array(4))).toThrow(error);
      delete behaviour.recoverThrows;
      expect(() => exports.recover(new Uint8Array(4))).toThrow(/trapped earlier/);
      expect(() => exports.admit(new Uint8Array(4), new Uint8Array(1))).toThrow(/trapped earlier/);
    }
  });
  it('gives memory back once no large call came for a while: a fresh instance, not a forgotten trap', () => {
    vi.useFakeTimers();
    try {
      const grown = fakeModule({});
      const made: CoreModuleExports[] = [];
      const renew = () => {
        const fresh = fakeModule({});
        made.push(fresh);
        return fresh;
      };
      const exports = canonicalAbiExports(grown, renew);
      const large = new Uint8Array(RENEW_INSTANCE_ABOVE_BYTES / 4 + 1);
      const setMemory = (m: CoreModuleExports, bytes: number) => { (m.memory as { buffer: ArrayBuffer }).buffer = new ArrayBuffer(bytes); };
      setMemory(grown, large.length + 64);
      expect(exports.recover(large)).toEqual(new Uint8Array(0));
      vi.advanceTimersByTime(RENEW_INSTANCE_AFTER_IDLE_MS * 3);
      expect(made).toHaveLength(0); // a large call, but the memory is under the bound: nothing to give back
      setMemory(grown, RENEW_INSTANCE_ABOVE_BYTES + 1);
      expect(exports.recover(large)).toEqual(new Uint8Array(0));
      // Large calls one after the other keep the grown instance; small ones do not postpone it.
      vi.advanceTimersByTime(RENEW_INSTANCE_AFTER_IDLE_MS - 1);
      expect(exports.feed(new Uint8Array(1), large)).toEqual(new Uint8Array(0));
      vi.advanceTimersByTime(RENEW_INSTANCE_AFTER_IDLE_MS - 1);
      expect(made).toHaveLength(0);
      expect(exports.recover(new Uint8Array(4))).toEqual(new Uint8Array(0));
      vi.advanceTimersByTime(1); // RENEW_INSTANCE_AFTER_IDLE_MS after the last large call
      expect(made).toHaveLength(1);
      // Later calls go to the fresh instance: the old one is never entered again.
      grown.recover = () => { throw new Error('the replaced instance was called'); };
      expect(exports.recover(new Uint8Array(4))).toEqual(new Uint8Array(0));
      setMemory(made[0]!, RENEW_INSTANCE_ABOVE_BYTES + 1);
      made[0]!.recover = () => { throw new Error('a trap'); };
      expect(() => exports.recover(large)).toThrow('a trap');
      vi.advanceTimersByTime(RENEW_INSTANCE_AFTER_IDLE_MS * 3);
      expect(made).toHaveLength(1);
      expect(() => exports.recover(new Uint8Array(4))).toThrow(/trapped earlier/);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
  it('keeps answering from the old instance when no fresh one can be made', () => {
    vi.useFakeTimers();
    try {
      const grown = fakeModule({});
      (grown.memory as { buffer: ArrayBuffer }).buffer = new ArrayBuffer(RENEW_INSTANCE_ABOVE_BYTES + 1);
      const exports = canonicalAbiExports(grown, () => { throw new RangeError('WebAssembly.Instance(): Out of memory'); });
      expect(exports.recover(new Uint8Array(4))).toEqual(new Uint8Array(0));
      vi.advanceTimersByTime(RENEW_INSTANCE_AFTER_IDLE_MS);
      expect(exports.admit(new Uint8Array(4), new Uint8Array(1))).toEqual(new Uint8Array(0));
    } finally {
      vi.useRealTimers();
    }
  });
  it('a trap in cabi_realloc disables it too', () => {
    const module = fakeModule({});
    const exports = canonicalAbiExports({ ...module, cabi_realloc: () => { throw new WasmRuntimeError('unreachable'); } });
    expect(() => exports.recover(new Uint8Array(4))).toThrow(WasmRuntimeError);
    expect(() => exports.recover(new Uint8Array(4))).toThrow(/trapped earlier/);
  });
});

describe('the adapter only converts', () => {
  const viaAdapter = wasmCoreFromExports({
    recover: reference.recoverEncoded, admit: reference.admitEncoded, feed: reference.feedEncoded, admitFrom: reference.admitFromEncoded,
  });
  it('decodes what the exports return', () => {
    expect(viaAdapter.recover(log)).toEqual(reference.recover(log));
    expect(viaAdapter.feed(new Uint8Array(0), log)).toEqual(reference.feed(new Uint8Array(0), log));
    expect(viaAdapter.feed(Uint8Array.of(9), log)).toEqual({ ok: false, reason: 'BAD_SUMMARY' });
    expect(viaAdapter.admit(log, { tag: 'RESUME', interruptId: t('x') })).toEqual(reference.admit(log, { tag: 'RESUME', interruptId: t('x') }));
  });
  it('sends unencodable requests as bytes the core refuses, after the log checks', () => {
    expect(viaAdapter.admit(log, { tag: 'FORK_AT', seq: -3 })).toMatchObject({ reason: RefusalReason.BAD_REQUEST });
    expect(viaAdapter.admit(new Uint8Array(0), { tag: 'FORK_AT', seq: -3 })).toMatchObject({ reason: RefusalReason.NO_RUN });
  });
  it('refuses exports without the four functions at once (ArgumentInvalidError), not as a trap at the first call', () => {
    // Before, wasmCoreFromExports({}) returned a core whose every call threw CoreTrapError
    // ("exports.recover is not a function"), the error of a broken core.
    const refusal = (exports: unknown) => {
      try {
        wasmCoreFromExports(exports as never);
      } catch (e) {
        return { code: (e as { code?: unknown }).code, argument: (e as { argument?: unknown }).argument, received: (e as { received?: unknown }).received };
      }
      return undefined;
    };
    const argument = 'wasmCoreFromExports(exports)';
    expect(refusal(null)).toEqual({ code: 'REMIT_ARGUMENT_INVALID', argument, received: 'null' });
    expect(refusal(undefined)).toEqual({ code: 'REMIT_ARGUMENT_INVALID', argument, received: 'undefined' });
    expect(refusal({})).toEqual({ code: 'REMIT_ARGUMENT_INVALID', argument, received: 'an object without recover, admit, feed, admitFrom' });
    expect(refusal({ recover: reference.recoverEncoded, admit: reference.admitEncoded, feed: 1 })).toMatchObject({ received: 'an object without feed, admitFrom' });
  });
  it('turns a trap into CoreTrapError', () => {
    const trapping = wasmCoreFromExports({
      recover: () => { throw new Error('RuntimeError: unreachable'); },
      admit: () => { throw new Error('RuntimeError: unreachable'); },
      feed: () => { throw new Error('RuntimeError: unreachable'); },
      admitFrom: () => { throw new Error('RuntimeError: unreachable'); },
    });
    expect(() => trapping.recoverEncoded(log)).toThrow(CoreTrapError);
    expect(() => trapping.feed(new Uint8Array(0), log)).toThrow(/feed/);
    expect(() => trapping.admit(log, { tag: 'CONTINUE_FROM', seq: 1 })).toThrow(/admit/);
  });
  it('passes CoreOutOfMemoryError through as it is: running out of memory is not a trap of the core', () => {
    const outOfMemory = new CoreOutOfMemoryError('feed', 10, 64, true);
    const exhausted = wasmCoreFromExports({
      recover: () => { throw outOfMemory; }, admit: () => { throw outOfMemory; }, feed: () => { throw outOfMemory; }, admitFrom: () => { throw outOfMemory; },
    });
    expect(() => exhausted.feed(new Uint8Array(0), log)).toThrow(outOfMemory);
    expect(() => exhausted.recover(log)).toThrow(outOfMemory);
    expect(() => exhausted.admitFrom(new Uint8Array(0), { tag: 'RESUME', interruptId: t('x') })).toThrow(outOfMemory);
  });
});

const wasm = await loadWasmCore().catch((e: unknown) => e as Error);
const allowNoWasm = process.env['REMIT_ALLOW_NO_WASM'] === '1';

// Without a Wasm build these fail, unless REMIT_ALLOW_NO_WASM=1 asks to skip them: then they show
// as skipped, never as passed.
describe.skipIf(wasm instanceof Error && allowNoWasm)('the built Wasm core', () => {
  it('loads from @remit/core-wasm', () => {
    if (wasm instanceof Error) throw wasm;
    expect(wasm.name).toBe('wasm');
  });
  it('recovers and admits like the reference on a small log', () => {
    const core = wasm as Awaited<ReturnType<typeof loadWasmCore>>;
    expect(core.name).toBe('wasm');
    expect(core.recoverEncoded(log)).toEqual(reference.recoverEncoded(log));
    expect(core.recover(log)).toEqual(reference.recover(log));
    expect(core.admit(log, { tag: 'RESUME', interruptId: t('x') })).toEqual({ accepted: true, reason: 0, detail: 0, seq: 2, offset: log.length });
  });
  it('feeds and admits from a summary like the reference, through the canonical ABI (the default) and jco', async () => {
    const core = wasm as Awaited<ReturnType<typeof loadWasmCore>>;
    const direct = await loadWasmCore(undefined, { binding: 'jco' });
    const fed = reference.feedEncoded(new Uint8Array(0), log);
    expect(core.feedEncoded(new Uint8Array(0), log)).toEqual(fed);
    expect(direct.feedEncoded(new Uint8Array(0), log)).toEqual(fed);
    const summary = reference.feed(new Uint8Array(0), log);
    if (!summary.ok) throw new Error('the reference refused the empty summary');
    const request = { tag: 'RESUME' as const, interruptId: t('x') };
    expect(core.admitFrom(summary.summary, request)).toEqual(reference.admit(log, request));
    expect(direct.admitFrom(summary.summary, request)).toEqual(reference.admit(log, request));
  });
  it('gives linear memory back after a large call: a fresh instance answers every later call as the old one would', async () => {
    // The real core module, instantiated here so that the test sees each instance's memory.
    const wasmApi = (globalThis as unknown as { WebAssembly: { Module: new (b: Uint8Array) => object; Instance: new (m: object, i: object) => { exports: Record<string, unknown> } } }).WebAssembly;
    const module = new wasmApi.Module(await readFile(new URL('./remit_core.core.wasm', wasmCoreModuleUrl())));
    const instances: CoreModuleExports[] = [];
    const instantiate = () => {
      const exports = new wasmApi.Instance(module, {}).exports as unknown as CoreModuleExports;
      instances.push(exports);
      return exports;
    };
    vi.useFakeTimers();
    try {
      const core = wasmCoreFromExports(canonicalAbiExports(instantiate(), instantiate));
      // A log whose first record's state alone is 20 MiB: the call copies it in, past the bound.
      const big = encodeLog([
        {
          kind: RecordKind.RUN_STARTED, seq: 0, runId: t('r'), workflow: t('w'), version: t('1'), fingerprint: t(''), definition: t(''),
          nodes: [{ name: t('i'), kind: 3 }], startNode: t('i'), state: new Uint8Array(20 * 1024 * 1024).fill(0x61),
        },
        { kind: RecordKind.INTERRUPT_PARKED, seq: 1, node: t('i'), interruptId: t('x') },
      ] as LogRecord[]);
      const request = { tag: 'RESUME' as const, interruptId: t('x') };
      expect(core.recoverEncoded(log)).toEqual(reference.recoverEncoded(log));
      expect(core.recoverEncoded(big)).toEqual(reference.recoverEncoded(big));
      expect(core.admitEncoded(big, encodeAdmissionRequest(request))).toEqual(reference.admitEncoded(big, encodeAdmissionRequest(request)));
      expect(instances).toHaveLength(1);
      const peak = instances[0]!.memory.buffer.byteLength;
      expect(peak).toBeGreaterThan(20 * 1024 * 1024);
      // The arena grows by at most 8 MiB beyond what a call needs.
      expect(peak).toBeLessThanOrEqual(big.length + 16 * 1024 * 1024);
      vi.advanceTimersByTime(RENEW_INSTANCE_AFTER_IDLE_MS);
      expect(instances).toHaveLength(2);
      expect(instances[1]!.memory.buffer.byteLength).toBeLessThanOrEqual(RENEW_INSTANCE_ABOVE_BYTES);
      // The same answers after the renewal, big and small, through every export.
      const fed = reference.feed(new Uint8Array(0), log);
      if (!fed.ok) throw new Error('the reference refused the empty summary');
      expect(core.recoverEncoded(log)).toEqual(reference.recoverEncoded(log));
      expect(core.feedEncoded(new Uint8Array(0), log)).toEqual(reference.feedEncoded(new Uint8Array(0), log));
      expect(core.admitFrom(fed.summary, request)).toEqual(reference.admit(log, request));
      expect(core.recoverEncoded(big)).toEqual(reference.recoverEncoded(big));
      vi.advanceTimersByTime(RENEW_INSTANCE_AFTER_IDLE_MS);
      expect(instances).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });
  it('is not disabled by a detached, fake or oversized argument, through either binding', async () => {
    const core = wasm as Awaited<ReturnType<typeof loadWasmCore>>;
    const jco = await loadWasmCore(undefined, { binding: 'jco' });
    const d = new Uint8Array(8);
    structuredClone(d.buffer, { transfer: [d.buffer] });
    for (const c of [core, jco]) {
      expect(() => c.recover(d)).toThrow(/recover\(log\) must be a Uint8Array/);
      expect(() => c.feed(d, log)).toThrow(/feed\(summary\)/);
      expect(() => c.admitFrom(d, { tag: 'RESUME', interruptId: t('x') })).toThrow(/admitFrom\(summary\)/);
      expect(() => c.recover(Object.create(Uint8Array.prototype))).toThrow(/recover\(log\)/);
      expect(() => c.recover(new Uint8Array(2 ** 32 - 1))).toThrow(/at most 2147483648 bytes/);
      expect(c.admit(log, { tag: 'RESUME', interruptId: d })).toEqual(reference.admit(log, { tag: 'RESUME', interruptId: d }));
      expect(c.recover(log)).toEqual(reference.recover(log));
    }
  });
});
