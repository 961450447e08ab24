/**
 * A fresh process for the wasm-memory suite: the Wasm core's linear memory before and after one
 * recovery of a large log. Usage (the suite runs a plain-JavaScript copy, see lib/compile-js.ts):
 *   node --expose-gc wasm-memory-child.js <records> [recover|feed-1mib]
 *
 * recover: one core.recover of the whole log. feed-1mib: the log fed from the empty summary in
 * pieces of 1 MiB, the way the sequencer reloads a run (ts-shell/src/sequencer/run-session.ts,
 * feedCore: a piece that ends inside a record leaves it torn, so the next piece starts at the
 * summary's durable_len, and a piece that does not advance is doubled).
 *
 * The shell does not expose the core instance's memory, so this child wraps
 * WebAssembly.instantiate (and the WebAssembly.Instance constructor) before anything loads the binding (the jco binding takes its reference
 * to it when it is first imported, which the core factory does lazily): every instance created in
 * this process is seen, and its exported memories are held weakly. Linear memory never shrinks,
 * so an instance's size after the call is its peak during it: the peak is read from the memories
 * that existed when the call began, held strongly until then. "After" is read once the process has
 * been idle for RENEW_INSTANCE_AFTER_IDLE_MS (plus a margin) and the collector has run: the
 * canonical-ABI binding gives back memory a call grew past 16 MiB by continuing with a fresh
 * instance when no large call came for that long (ts-shell/src/core/wasm-core.ts).
 * Prints one JSON line.
 */

export {};

interface WasmMemory { readonly buffer: ArrayBuffer }
interface WasmApi { instantiate: (...args: unknown[]) => Promise<unknown>; Instance: new (...args: unknown[]) => unknown }

const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
const memories: WeakRef<WasmMemory>[] = [];
let instances = 0;

function track(instance: unknown): void {
  const exports = (instance as { exports?: Record<string, unknown> } | undefined)?.exports ?? {};
  instances++;
  for (const v of Object.values(exports)) {
    if (v !== null && typeof v === 'object' && (v as WasmMemory).buffer instanceof ArrayBuffer) memories.push(new WeakRef(v as WasmMemory));
  }
}

const originalInstantiate = wasmApi.instantiate.bind(wasmApi);
wasmApi.instantiate = async (...args: unknown[]) => {
  const out = await originalInstantiate(...args);
  // instantiate(bytes) resolves to { module, instance }; instantiate(module) to the instance.
  track((out as { instance?: unknown }).instance ?? out);
  return out;
};

// The synchronous constructor too, should a binding create its instance that way.
wasmApi.Instance = new Proxy(wasmApi.Instance, {
  construct(target, args, newTarget) {
    const instance = Reflect.construct(target, args, newTarget) as unknown;
    track(instance);
    return instance as object;
  },
});

/** Bytes of linear memory of every tracked memory still alive. */
function liveBytes(): number {
  let total = 0;
  for (const ref of memories) total += ref.deref()?.buffer.byteLength ?? 0;
  return total;
}

const gc = (globalThis as { gc?: () => void }).gc;
const records = Number(process.argv[2] ?? '1000000');
const mode = process.argv[3] ?? 'recover';
if (mode !== 'recover' && mode !== 'feed-1mib') {
  process.stderr.write(`unknown mode "${mode}": expected recover or feed-1mib\n`);
  process.exit(2);
}
const PIECE_BYTES = 1024 * 1024;
const { createCore, RENEW_INSTANCE_AFTER_IDLE_MS } = await import('remit/core');
const { buildMixedLog } = await import('../workloads/log-mix.js');

const core = await createCore('wasm');
const atLoad = liveBytes();
const log = buildMixedLog(records, []).bytes;
// One small recovery first, so "before" is an instance that has run (its first allocations made).
const small = core.recover(log.subarray(0, 0));
const before = liveBytes();
let heldDuringCall: (WasmMemory | undefined)[] = memories.map((ref) => ref.deref());
const t0 = performance.now();
const r = mode === 'recover' ? core.recover(log) : feedInPieces(log);
const recoverMs = performance.now() - t0;

/** The sequencer's reload loop over the whole log (see the header); the last piece's recovery. */
function feedInPieces(bytes: Uint8Array): ReturnType<typeof core.recover> {
  let summary: Uint8Array = new Uint8Array(0);
  let from = 0;
  let piece = PIECE_BYTES;
  for (;;) {
    const end = Math.min(bytes.length, from + piece);
    const fed = core.feed(summary, bytes.subarray(from, end));
    if (!fed.ok) throw new Error('the core refused the summary it wrote');
    if (!fed.recovery.ok || end === bytes.length) return fed.recovery;
    const advanced = fed.recovery.durableLen > from;
    summary = fed.summary;
    from = fed.recovery.durableLen;
    piece = advanced ? PIECE_BYTES : piece * 2;
  }
}

if (!r.ok || r.recordCount !== records) {
  process.stderr.write(`recovery failed: ${JSON.stringify({ ok: r.ok, small: small.ok })}\n`);
  process.exit(1);
}
const peak = heldDuringCall.reduce((sum, m) => sum + (m?.buffer.byteLength ?? 0), 0);
if (memories.length === 0) {
  // Reporting 0 bytes would read as a met target: seeing no memory at all is a failure of the probe.
  process.stderr.write('no Wasm memory was seen: the core was not instantiated through WebAssembly.instantiate or WebAssembly.Instance\n');
  process.exit(1);
}
heldDuringCall = [];
const idleMs = RENEW_INSTANCE_AFTER_IDLE_MS + 200;
await new Promise((resolve) => setTimeout(resolve, idleMs));
gc?.();
await new Promise((resolve) => setTimeout(resolve, 0));
gc?.();
const after = liveBytes();
process.stdout.write(JSON.stringify({
  records, mode, log_bytes: log.length, instances, memories: memories.length, at_load_bytes: atLoad, before_bytes: before,
  peak_bytes: peak, after_bytes: after, idle_ms_before_after: idleMs, gc_exposed: gc !== undefined, recover_ms: recoverMs,
}) + '\n');
