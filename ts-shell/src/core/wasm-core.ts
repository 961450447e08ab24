/**
 * The Wasm recovery core: the Rust core compiled to a WebAssembly component, transpiled by jco
 * into the package @remit/core-wasm (wasm/ in the repository). This adapter only converts: bytes
 * in, bytes out, decoded with ./encoding.ts. The module is loaded lazily, so the reference core
 * works without it.
 */

import { withByteArguments } from './byte-arguments.js';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { ArgumentInvalidError, CoreUnavailableError, OptionInvalidError } from '../errors.js';
import { notKnown, unknownKey } from '../known-keys.js';
import {
  decodeAdmission, decodeFed, decodeRecovery, encodeAdmissionRequest, isWellFormedRequest, MALFORMED_REQUEST_BYTES,
} from './encoding.js';
import type { Admission, AdmissionRequest, Fed, Recovery, RecoveryCore } from './types.js';

/** What jco generates for the component's exports (canonical encodings of docs/core-api.md). */
export interface WasmCoreExports {
  recover(log: Uint8Array): Uint8Array;
  admit(log: Uint8Array, request: Uint8Array): Uint8Array;
  feed(summary: Uint8Array, chunk: Uint8Array): Uint8Array;
  admitFrom(summary: Uint8Array, request: Uint8Array): Uint8Array;
}

/** The package that carries the component's jco bindings and its .wasm. */
export const WASM_CORE_PACKAGE = '@remit/core-wasm';

const FIX = 'install @remit/core-wasm (a dependency of remit); in the REMIT repository run `npm run setup`, which builds it; or choose the TypeScript reference core (core: "reference")';

/** Where the binding's entry module is (a file URL), resolved like any import of this package. */
export function wasmCoreModuleUrl(): string {
  try {
    return pathToFileURL(createRequire(import.meta.url).resolve(WASM_CORE_PACKAGE)).href;
  } catch (e) {
    throw new CoreUnavailableError('wasm', 'WASM_NOT_INSTALLED', `${WASM_CORE_PACKAGE} cannot be resolved (not installed, or not built): ${FIX}`, e);
  }
}

/** The Wasm core trapped or threw: a bug in the core (it must be total), never bad input. */
export class CoreTrapError extends Error {
  override readonly name = 'CoreTrapError';
  constructor(readonly operation: CoreOperation, readonly logLen: number, options?: { cause?: unknown }) {
    super(`the Wasm core failed in ${operation} on a ${logLen}-byte log: ${String((options?.cause as Error)?.message ?? options?.cause)}`, options);
  }
}

/**
 * The Wasm core ran out of linear memory in one call: an allocation found no room (a WebAssembly
 * memory holds at most 4 GiB, and a host may refuse to grow it sooner). Not a bug and not bad
 * input: the call is not answered, and the canonical-ABI binding goes on with a fresh instance of
 * the compiled module (`coreUsable`), since the core keeps nothing between calls. Only when no
 * fresh instance can be made is the binding disabled, as after a trap. The core writes nothing, but
 * the operation that called it may have appended before (a step's record is appended, then fed to
 * the core): what was appended stays. The reference core (core: "reference") has no such limit.
 */
export class CoreOutOfMemoryError extends Error {
  override readonly name = 'CoreOutOfMemoryError';
  constructor(
    readonly operation: CoreOperation,
    /** The bytes of the call's arguments (log, or summary and chunk or request). */
    readonly argumentBytes: number,
    /** How large linear memory had grown when the allocation failed. */
    readonly memoryBytes: number,
    /** Whether later calls are answered (false only when no fresh instance could be made). */
    readonly coreUsable: boolean,
    options?: { cause?: unknown },
  ) {
    super(
      `the Wasm core ran out of linear memory in ${operation} (${argumentBytes} bytes of arguments; its memory had reached ${memoryBytes} bytes; ` +
        `a WebAssembly memory holds at most 4 GiB, and the host may allow less): this call was not answered; ` +
        (coreUsable ? 'later calls are answered by a fresh instance' : 'no fresh instance could be made, so the core is disabled') +
        '. The reference core (createRemit({ core: "reference" })) has no such limit.',
      options,
    );
  }
}

type CoreOperation = 'recover' | 'admit' | 'feed' | 'admitFrom';

function isModuleNotFound(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'ENOENT';
}

async function importExports(moduleUrl: URL): Promise<WasmCoreExports> {
  let mod: Partial<WasmCoreExports>;
  try {
    mod = (await import(moduleUrl.href)) as Partial<WasmCoreExports>;
  } catch (e) {
    if (isModuleNotFound(e)) {
      throw new CoreUnavailableError('wasm', 'WASM_NOT_BUILT', `${moduleUrl.pathname} is missing: ${FIX}`, e);
    }
    throw new CoreUnavailableError('wasm', 'WASM_LOAD_FAILED', `${moduleUrl.pathname} failed to load (${String((e as Error)?.message ?? e)}): ${FIX}`, e);
  }
  if (typeof mod.recover !== 'function' || typeof mod.admit !== 'function' || typeof mod.feed !== 'function' || typeof mod.admitFrom !== 'function') {
    throw new CoreUnavailableError('wasm', 'WASM_LOAD_FAILED', `${moduleUrl.pathname} does not export recover, admit, feed and admitFrom: ${FIX}`);
  }
  return mod as WasmCoreExports;
}

const EXPORTED_FUNCTIONS = ['recover', 'admit', 'feed', 'admitFrom'] as const satisfies readonly (keyof WasmCoreExports)[];

/** One call of an export: CoreOutOfMemoryError as it is, any other error a CoreTrapError. */
function guestCall(operation: CoreOperation, logLen: number, call: () => Uint8Array): Uint8Array {
  try {
    return call();
  } catch (e) {
    if (e instanceof CoreOutOfMemoryError) throw e;
    throw new CoreTrapError(operation, logLen, { cause: e });
  }
}

/** Wrap component exports (or any pair of functions with the same contract) as a RecoveryCore. */
export function wasmCoreFromExports(exports: WasmCoreExports): RecoveryCore {
  // Checked now: exports without these functions made every call a CoreTrapError ("the Wasm core
  // failed in recover ...: exports.recover is not a function"), which reads as a broken core.
  const lacking = EXPORTED_FUNCTIONS.filter((name) => typeof (exports as Partial<WasmCoreExports> | null)?.[name] !== 'function');
  if (lacking.length > 0) {
    throw new ArgumentInvalidError('wasmCoreFromExports(exports)', `the component's exports: an object with the functions ${EXPORTED_FUNCTIONS.join(', ')}`,
      exports === null ? 'null' : typeof exports !== 'object' ? typeof exports : `an object without ${lacking.join(', ')}`);
  }
  const recoverEncoded = (log: Uint8Array): Uint8Array => guestCall('recover', log.length, () => exports.recover(log));
  const admitEncoded = (log: Uint8Array, request: Uint8Array): Uint8Array => guestCall('admit', log.length, () => exports.admit(log, request));
  const feedEncoded = (summary: Uint8Array, chunk: Uint8Array): Uint8Array => guestCall('feed', chunk.length, () => exports.feed(summary, chunk));
  const admitFromEncoded = (summary: Uint8Array, request: Uint8Array): Uint8Array =>
    guestCall('admitFrom', summary.length, () => exports.admitFrom(summary, request));
  return withByteArguments({
    name: 'wasm',
    recoverEncoded,
    admitEncoded,
    feedEncoded,
    admitFromEncoded,
    feed: (summary: Uint8Array, chunk: Uint8Array): Fed => decodeFed(feedEncoded(summary, chunk)),
    admitFrom: (summary: Uint8Array, request: AdmissionRequest): Admission => {
      const bytes = isWellFormedRequest(request) ? encodeAdmissionRequest(request) : MALFORMED_REQUEST_BYTES;
      return decodeAdmission(admitFromEncoded(summary, bytes));
    },
    recover: (log: Uint8Array): Recovery => decodeRecovery(recoverEncoded(log)),
    admit: (log: Uint8Array, request: AdmissionRequest): Admission => {
      // A request the encoding cannot carry goes in as bytes every core refuses as BAD_REQUEST, so
      // the log checks (LOG_INVALID, NO_RUN) still come first, as for any malformed request.
      const bytes = isWellFormedRequest(request) ? encodeAdmissionRequest(request) : MALFORMED_REQUEST_BYTES;
      return decodeAdmission(admitEncoded(log, bytes));
    },
  });
}

/**
 * How the component's exports are called. 'canonical-abi' (the default): the core module
 * (remit_core.core.wasm, which jco extracted from the component) called directly by the canonical
 * ABI of `func(list<u8>, ...) -> list<u8>`: copy the arguments in through `cabi_realloc`, read
 * the (ptr, len) pair the export returns, copy the bytes out, call the post-return function.
 * 'jco': through the JavaScript jco generated for the component. Both return the same bytes
 * (equivalence/binding.test.ts checks it on every corpus log, prefix, cut and request); the
 * direct calls skip jco's per-call task bookkeeping (about 3 us a call) and the load of its
 * generated module (about 3 ms of a fresh process's first resume): docs/architecture.md, decision 10.
 */
export type WasmBinding = 'jco' | 'canonical-abi';

export interface LoadWasmCoreOptions {
  binding?: WasmBinding;
}

/** The core module's exports that the canonical-ABI binding calls. */
export interface CoreModuleExports {
  memory: { readonly buffer: ArrayBuffer };
  cabi_realloc(oldPtr: number, oldLen: number, align: number, newLen: number): number;
  recover(ptr: number, len: number): number;
  admit(logPtr: number, logLen: number, reqPtr: number, reqLen: number): number;
  feed(summaryPtr: number, summaryLen: number, chunkPtr: number, chunkLen: number): number;
  'admit-from'(summaryPtr: number, summaryLen: number, reqPtr: number, reqLen: number): number;
  cabi_post_recover(ret: number): void;
  cabi_post_admit(ret: number): void;
  cabi_post_feed(ret: number): void;
  'cabi_post_admit-from'(ret: number): void;
  /** 1 when an allocation since the last post-return found no room (a module built before it: absent). */
  'out-of-memory'?(): number;
}

/** The part of the WebAssembly JS API used here (the project's TypeScript libs do not declare it). */
interface WebAssemblyApi {
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Module: { new (bytes: Uint8Array): object; imports(module: object): Array<{ module: string; name: string }> };
  RuntimeError: new (...args: never[]) => Error;
}
const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

const CORE_MODULE_EXPORTS = [
  'memory', 'cabi_realloc', 'recover', 'admit', 'feed', 'admit-from', 'cabi_post_recover', 'cabi_post_admit', 'cabi_post_feed',
  'cabi_post_admit-from',
] as const;

/** The exports of an instance of the core module, checked against the ones the binding calls. */
function coreModuleExports(instance: { exports: Record<string, unknown> }): CoreModuleExports {
  const exports = instance.exports;
  const missing = CORE_MODULE_EXPORTS.filter((name) => exports[name] === undefined);
  if (missing.length > 0) throw new Error(`it does not export ${missing.join(', ')}`);
  return exports as unknown as CoreModuleExports;
}

/**
 * The first instance of the core module, and a way to make fresh ones of the compiled module.
 * A fresh instance shares the module's compiled code: about 0.03-0.1 ms, no compilation.
 */
function instantiateCoreModule(moduleUrl: URL): { exports: CoreModuleExports; renew: () => CoreModuleExports } {
  const coreUrl = new URL('./remit_core.core.wasm', moduleUrl);
  const module = compiledCoreModule(coreUrl);
  try {
    return { exports: coreModuleExports(new webAssembly.Instance(module, {})), renew: () => coreModuleExports(new webAssembly.Instance(module, {})) };
  } catch (e) {
    throw new CoreUnavailableError('wasm', 'WASM_LOAD_FAILED', loadFailure(coreUrl, e), e);
  }
}

/** The core modules compiled in this process, by file URL: a process compiles each once. */
const COMPILED_CORE_MODULES = new Map<string, object>();

/**
 * The core module at `coreUrl`, compiled once per process (each later createRemit or loadWasmCore
 * instantiates it: a service that makes an instance per request does not compile it per request).
 * Read and compiled synchronously: the module is about 79 KB and V8 compiles its functions lazily, so
 * the compile takes about 0.5 ms on the main thread. The asynchronous forms (`readFile`,
 * `WebAssembly.compile`) wait for the thread pool and for V8's background threads, which in a
 * fresh process on two cores are still busy with the code just imported: loading the core then
 * took 10 ms in most fresh processes instead of 2 ms (bench/resume-phases.ts, the "core" phase),
 * a third of a cold resume. Only a module that compiled and imports nothing is kept.
 */
function compiledCoreModule(coreUrl: URL): object {
  const cached = COMPILED_CORE_MODULES.get(coreUrl.href);
  if (cached !== undefined) return cached;
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(coreUrl);
  } catch (e) {
    throw new CoreUnavailableError('wasm', 'WASM_NOT_BUILT', `${coreUrl.pathname} is missing: ${FIX}`, e);
  }
  try {
    const module = new webAssembly.Module(bytes);
    // The recovery core is pure: a module that imports anything is not the one this binding knows.
    const imports = webAssembly.Module.imports(module);
    if (imports.length > 0) throw new Error(`it imports ${imports.map((i) => `${i.module}.${i.name}`).join(', ')}`);
    COMPILED_CORE_MODULES.set(coreUrl.href, module);
    return module;
  } catch (e) {
    throw new CoreUnavailableError('wasm', 'WASM_LOAD_FAILED', loadFailure(coreUrl, e), e);
  }
}

function loadFailure(coreUrl: URL, e: unknown): string {
  return `the Wasm core module ${coreUrl.pathname} cannot be called directly (${String((e as Error)?.message ?? e)}): ${FIX}`;
}

/**
 * Linear memory (bytes) above which the canonical-ABI binding gives its memory back: it replaces
 * the instance with a fresh one once RENEW_INSTANCE_AFTER_IDLE_MS have passed without a large call.
 * A WebAssembly memory can grow but never shrink, so one large call (a whole-log `recover` of a
 * 160 MB log, a fork's `admit` of a long log, a feed of one huge record) would otherwise keep its
 * peak for the life of the process. The core keeps nothing between calls (each call's arguments
 * are all it knows), so a fresh instance of the same compiled module answers every later call as
 * the old one would; the old memory goes to the garbage collector. The sequencer's calls stay
 * below it (its reload feeds 1 MiB pieces).
 */
export const RENEW_INSTANCE_ABOVE_BYTES = 16 * 1024 * 1024;

/**
 * How long (ms) after the last large call (byte arguments over a quarter of
 * RENEW_INSTANCE_ABOVE_BYTES) the binding waits before it gives the memory back. Why wait: a fresh
 * instance grows its memory again, and the first touch of fresh pages costs (a 10^6-record
 * recovery: about 250 ms in a fresh instance against 185 ms in one already grown), so a service or
 * benchmark that makes large calls one after the other keeps the instance it has (3 s: the recovery
 * suite makes a large call on the Wasm core about once a second, between the other cores' calls).
 * The timer is unref'd: it never keeps a process alive.
 */
export const RENEW_INSTANCE_AFTER_IDLE_MS = 3000;

/** Byte arguments above this make a call large: it postpones the renewal. */
const LARGE_CALL_BYTES = RENEW_INSTANCE_ABOVE_BYTES / 4;

/**
 * The canonical-ABI calls. As with the jco binding, a trap leaves the instance unusable: every
 * later call throws (the core must be total, so a trap is a bug to report, not to retry). Only a
 * trap counts: a WebAssembly.RuntimeError, or any error while the guest runs its export or
 * post-return. An error on the JavaScript side before the guest is entered (copying an argument
 * into linear memory that does not fit there) is thrown as it is and leaves the instance usable:
 * the guest's state is untouched but for an allocation it never uses (the adapter still reports it
 * as CoreTrapError, its cause the RangeError).
 *
 * Running out of linear memory is not a bug: an allocation that finds no room makes the core abort
 * (a trap, in `cabi_realloc` or in the export), and its arena remembers why (the core module's
 * `out-of-memory` export). Such a call throws CoreOutOfMemoryError and, with `renew`, the binding
 * goes on with a fresh instance (the trapped one is left: a trap mid-call leaves its stack pointer
 * where the call had moved it). Without `renew` it is disabled as after any trap. A module that
 * answers 0 from `cabi_realloc` instead (built before it trapped) gets the same error before the
 * guest runs: the arena is reset and the instance kept; a 0 is never taken as an address (the
 * argument would be written over the module's stack and data).
 *
 * With `renew`, linear memory left above RENEW_INSTANCE_ABOVE_BYTES by a call is given back
 * RENEW_INSTANCE_AFTER_IDLE_MS after the last large call, by continuing with a fresh instance from
 * `renew` (a trap is not forgotten by it: the binding stays disabled). Exported for the tests (not
 * by remit/core).
 */
export function canonicalAbiExports(first: CoreModuleExports, renew?: () => CoreModuleExports): WasmCoreExports {
  let core = first;
  let trapped: unknown = null;
  // A view of the instance's memory, renewed when the memory grows (growing detaches the buffer).
  let memory = new Uint8Array(core.memory.buffer);
  const bytesOfMemory = (): Uint8Array => {
    if (memory.buffer !== core.memory.buffer) memory = new Uint8Array(core.memory.buffer);
    return memory;
  };
  const isTrap = (e: unknown) => e instanceof webAssembly.RuntimeError;
  /** Whether the trapped call's arena found no room (a module without the export: never). */
  const ranOutOfMemory = (): boolean => {
    try {
      return core['out-of-memory']?.() === 1;
    } catch {
      return false;
    }
  };
  /** Copy `bytes` (a genuine Uint8Array: withByteArguments made it) into linear memory. */
  const copyIn = (operation: CoreOperation, argumentBytes: number, bytes: Uint8Array): number => {
    const length = bytes.length;
    let ptr: number;
    try {
      ptr = core.cabi_realloc(0, 0, 1, length) >>> 0;
    } catch (e) {
      if (isTrap(e) && ranOutOfMemory()) throw outOfMemory(operation, argumentBytes, e);
      if (isTrap(e)) trapped = e;
      throw e;
    }
    if (ptr === 0 && length > 0) {
      // No room, from a module that answers 0 instead of trapping: free this call's earlier
      // argument too (a reset is all a post-return does).
      const memoryBytes = core.memory.buffer.byteLength;
      core.cabi_post_recover(0);
      throw new CoreOutOfMemoryError(operation, argumentBytes, memoryBytes, true);
    }
    const m = bytesOfMemory();
    if (ptr + length > m.length) {
      throw new RangeError(`a ${length}-byte argument does not fit in the Wasm core's linear memory (allocated at ${ptr} of ${m.length} bytes)`);
    }
    m.set(bytes, ptr);
    return ptr;
  };
  /** The error for a call that trapped out of memory; goes on with a fresh instance when it can. */
  const outOfMemory = (operation: CoreOperation, argumentBytes: number, trap: unknown): CoreOutOfMemoryError => {
    const memoryBytes = core.memory.buffer.byteLength;
    // No fresh instance either (the host is out of memory too): disabled, as after any trap.
    if (!continueWithFreshInstance()) trapped = trap;
    return new CoreOutOfMemoryError(operation, argumentBytes, memoryBytes, trapped === null, { cause: trap });
  };
  /** Replace the instance with a fresh one of the same module; false when none can be made. */
  const continueWithFreshInstance = (): boolean => {
    if (renew === undefined) return false;
    try {
      core = renew();
    } catch {
      return false;
    }
    memory = new Uint8Array(core.memory.buffer);
    return true;
  };
  const u32At = (m: Uint8Array, at: number) => (m[at]! | (m[at + 1]! << 8) | (m[at + 2]! << 16) | (m[at + 3]! << 24)) >>> 0;
  const copyOut = (ret: number): Uint8Array => {
    const m = bytesOfMemory();
    const ptr = u32At(m, ret);
    return m.slice(ptr, ptr + u32At(m, ret + 4));
  };
  const refuseIfTrapped = () => {
    if (trapped !== null) throw new Error('the Wasm core instance trapped earlier and cannot be called again', { cause: trapped });
  };
  // Memory give-back: a timer, restarted by every large call, renews the instance when it fires.
  // Calls are synchronous, so it never fires during one.
  let renewal: ReturnType<typeof setTimeout> | undefined;
  const renewNow = () => {
    renewal = undefined;
    // Without a fresh instance (out of memory?) the old one still answers; its memory stays.
    if (trapped === null) continueWithFreshInstance();
  };
  const renewWhenIdle = (large: boolean) => {
    if (renew === undefined || core.memory.buffer.byteLength <= RENEW_INSTANCE_ABOVE_BYTES) return;
    if (renewal !== undefined) {
      if (!large) return;
      clearTimeout(renewal);
    }
    renewal = setTimeout(renewNow, RENEW_INSTANCE_AFTER_IDLE_MS);
    (renewal as { unref?: () => void }).unref?.();
  };
  /** Enter the guest: any error from here on is the guest's, a trap. */
  const run = (operation: CoreOperation, argumentBytes: number, call: () => number, post: (ret: number) => void): Uint8Array => {
    let ret: number;
    let out: Uint8Array;
    try {
      ret = call();
    } catch (e) {
      if (isTrap(e) && ranOutOfMemory()) throw outOfMemory(operation, argumentBytes, e);
      trapped = e;
      throw e;
    }
    try {
      out = copyOut(ret);
    } catch (e) {
      // The answer is there but the host has no memory to copy it out (a RangeError from the
      // allocation): the guest did nothing wrong, so it is reset and kept.
      const memoryBytes = core.memory.buffer.byteLength;
      postReturn(post, ret);
      throw new CoreOutOfMemoryError(operation, argumentBytes, memoryBytes, trapped === null, { cause: e });
    }
    postReturn(post, ret);
    renewWhenIdle(argumentBytes > LARGE_CALL_BYTES);
    return out;
  };
  /** The post-return (the arena's reset): any error there is the guest's, a trap. */
  const postReturn = (post: (ret: number) => void, ret: number): void => {
    try {
      post(ret);
    } catch (e) {
      trapped = e;
      throw e;
    }
  };
  /** An export of two list arguments: copy both in, call, copy the result out, post-return. */
  const two = (
    operation: CoreOperation, a: Uint8Array, b: Uint8Array,
    call: (aPtr: number, aLen: number, bPtr: number, bLen: number) => number, post: (ret: number) => void,
  ): Uint8Array => {
    refuseIfTrapped();
    const argumentBytes = a.length + b.length;
    const aPtr = copyIn(operation, argumentBytes, a);
    const bPtr = copyIn(operation, argumentBytes, b);
    return run(operation, argumentBytes, () => call(aPtr, a.length, bPtr, b.length), post);
  };
  return {
    recover: (log) => {
      refuseIfTrapped();
      const logPtr = copyIn('recover', log.length, log);
      return run('recover', log.length, () => core.recover(logPtr, log.length), (ret) => core.cabi_post_recover(ret));
    },
    // Read `core` at each call: a renewal may have replaced the instance since.
    admit: (log, request) => two('admit', log, request, (...a) => core.admit(...a), (ret) => core.cabi_post_admit(ret)),
    feed: (summary, chunk) => two('feed', summary, chunk, (...a) => core.feed(...a), (ret) => core.cabi_post_feed(ret)),
    admitFrom: (summary, request) => two('admitFrom', summary, request, (...a) => core['admit-from'](...a), (ret) => core['cabi_post_admit-from'](ret)),
  };
}

/**
 * Load the Wasm core from the binding module at `moduleUrl` (a file URL; default: the installed
 * @remit/core-wasm). Throws CoreUnavailableError (saying how to fix it) when it is missing.
 */
export async function loadWasmCore(moduleUrl: string | URL = wasmCoreModuleUrl(), options: LoadWasmCoreOptions = {}): Promise<RecoveryCore> {
  const checked = checkedOptions(options);
  return loadWasmCoreAt(checkedModuleUrl(moduleUrl), checked);
}

/** The binding module's URL, or ArgumentInvalidError (passing `wasmCoreModuleUrl` uncalled, a bare path). */
function checkedModuleUrl(moduleUrl: unknown): URL {
  const expected = 'a file: URL (a string such as wasmCoreModuleUrl() returns, or a URL object)';
  let url: URL;
  if (moduleUrl instanceof URL) {
    url = moduleUrl;
  } else if (typeof moduleUrl !== 'string') {
    const received = typeof moduleUrl === 'function' ? `a function${moduleUrl.name ? ` (${moduleUrl.name}: call it)` : ''}` : moduleUrl === null ? 'null' : `a ${typeof moduleUrl}`;
    throw new ArgumentInvalidError('loadWasmCore(moduleUrl)', expected, received);
  } else {
    try {
      url = new URL(moduleUrl);
    } catch {
      throw new ArgumentInvalidError('loadWasmCore(moduleUrl)', expected, `${JSON.stringify(moduleUrl.slice(0, 200))}, which is not a URL (for a path: pathToFileURL(path))`);
    }
  }
  // The core's .wasm is read from the binding module's folder on disk: a data:, http: or other
  // URL has none (it was Node's bare "Invalid URL", or "missing: install @remit/core-wasm").
  if (url.protocol !== 'file:') {
    throw new ArgumentInvalidError('loadWasmCore(moduleUrl)', expected, `a ${url.protocol} URL (the core is read from the binding module's folder on disk)`);
  }
  return url;
}

const LOAD_WASM_CORE_OPTIONS: readonly (keyof LoadWasmCoreOptions & string)[] = ['binding'] satisfies (keyof LoadWasmCoreOptions)[];
const WASM_BINDINGS: readonly WasmBinding[] = ['canonical-abi', 'jco'];

/** Throws OptionInvalidError for a key loadWasmCore does not know or a binding it does not have (a typo would otherwise pick the default). */
function checkedOptions(options: LoadWasmCoreOptions): Required<LoadWasmCoreOptions> {
  if (options === null || typeof options !== 'object') {
    throw new OptionInvalidError('options', options, 'must be an object ({ binding?: "canonical-abi" | "jco" }) or undefined');
  }
  const unknown = unknownKey(options, LOAD_WASM_CORE_OPTIONS);
  if (unknown !== undefined) throw new OptionInvalidError(unknown, (options as Record<string, unknown>)[unknown], notKnown('an option of loadWasmCore', LOAD_WASM_CORE_OPTIONS));
  const binding = options.binding ?? 'canonical-abi';
  if (!WASM_BINDINGS.includes(binding)) {
    throw new OptionInvalidError('binding', binding, `must be ${WASM_BINDINGS.map((b) => JSON.stringify(b)).join(' or ')}`);
  }
  return { binding };
}

async function loadWasmCoreAt(moduleUrl: URL, options: Required<LoadWasmCoreOptions>): Promise<RecoveryCore> {
  if (options.binding === 'canonical-abi') {
    const { exports, renew } = instantiateCoreModule(moduleUrl);
    return wasmCoreFromExports(canonicalAbiExports(exports, renew));
  }
  return wasmCoreFromExports(await importExports(moduleUrl));
}
