// The Wasm component through its jco bindings (wasm/pkg, built by scripts/build-wasm.sh):
// golden fixtures from the Rust tests, a log built here byte by byte, totality on garbage, and
// memory that stays flat over 10^5 calls.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

type Binding = typeof import('./pkg/remit_core.js');

const here = dirname(fileURLToPath(import.meta.url));
const fixturesDir = join(here, '..', 'verus-core', 'tests', 'fixtures');

let core: Binding;

// The project's tsconfig has no DOM lib, so the WebAssembly global is typed locally.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmApi {
  instantiate: (...args: unknown[]) => Promise<unknown>;
  Instance: abstract new (...args: never[]) => { exports: Record<string, unknown> };
  Memory: abstract new (...args: never[]) => WasmMemory;
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** The component's linear memory, captured when jco instantiates the core module. */
let capturedMemory: WasmMemory | undefined;

beforeAll(async () => {
  // jco's generated module keeps `WebAssembly.instantiate` in a constant at load time; wrapping
  // it before the import lets this test watch the instance's memory (vitest runs each test file
  // in its own process, so nothing else sees the wrapper).
  const original = wasmApi.instantiate;
  wasmApi.instantiate = async (...args: unknown[]) => {
    const result = await original(...args);
    const instance = result instanceof wasmApi.Instance ? result : (result as { instance: InstanceType<WasmApi['Instance']> }).instance;
    const memory = instance.exports.memory;
    if (memory instanceof wasmApi.Memory) capturedMemory = memory;
    return result;
  };
  try {
    core = await import('./pkg/remit_core.js');
  } finally {
    wasmApi.instantiate = original;
  }
});

const fromHex = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex, 'hex'));
const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

// --- a few bytes of the log format, written here independently of the Rust code -----------

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let bit = 0; bit < 8; bit++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
})();

function crc32c(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const u32 = (v: number): number[] => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
const text = (s: string): number[] => [...Buffer.from(s, 'utf8')];
const field = (s: string): number[] => [...u32(Buffer.byteLength(s)), ...text(s)];

function frame(seq: number, kind: number, payload: number[]): number[] {
  const header = [...u32(payload.length), ...u32(seq), 1, kind];
  const check = crc32c(Uint8Array.from(header)) & 0xffff;
  const body = [...header, check & 0xff, check >>> 8, ...payload];
  return [...body, ...u32(crc32c(Uint8Array.from(body)))];
}

/** A format-2 record: the version-1 frame with version byte 2 and a trailing 4-byte link,
 * CRC32C(previous chain value LE || this record's checksum LE). Returns the bytes and the new
 * chain value (the link). */
function frameV2(seq: number, kind: number, payload: number[], prevChain: number): { bytes: number[]; chain: number } {
  const header = [...u32(payload.length), ...u32(seq), 2, kind];
  const check = crc32c(Uint8Array.from(header)) & 0xffff;
  const body = [...header, check & 0xff, check >>> 8, ...payload];
  const sum = crc32c(Uint8Array.from(body));
  const link = crc32c(Uint8Array.from([...u32(prevChain), ...u32(sum)]));
  return { bytes: [...body, ...u32(sum), ...u32(link)], chain: link };
}

function handBuiltLog(): Uint8Array {
  const runStarted = [
    ...field('run-7'), ...field('wf'), ...field('v1'), ...field(''), ...field('{}'),
    ...u32(2), ...field('a'), 1, ...field('b'), 1,
    ...field('a'), ...field('{"x":0}'),
  ];
  const nodeCompleted = [...field('a'), ...field('b'), 0, ...field('{"x":1}')];
  return Uint8Array.from([...frame(0, 1, runStarted), ...frame(1, 2, nodeCompleted)]);
}

/** A format-2 run parked on an effect: RUN_STARTED, EFFECT_INTENT and EFFECT_ATTEMPT. */
function handBuiltV2Log(): { log: Uint8Array; starts: number[] } {
  const runStarted = [
    ...field('run-8'), ...field('wf'), ...field('v1'), ...field(''), ...field('{}'),
    ...u32(1), ...field('e'), 2,
    ...field('e'), ...field('{}'),
  ];
  const intent = [...field('e'), ...field('k1')];
  const attempt = [...field('e'), ...field('k1'), ...u32(1), ...field('{"owner":"x"}')];
  const a = frameV2(0, 1, runStarted, 0);
  const b = frameV2(1, 3, intent, a.chain);
  const c = frameV2(2, 10, attempt, b.chain);
  const starts = [0, a.bytes.length, a.bytes.length + b.bytes.length];
  return { log: Uint8Array.from([...a.bytes, ...b.bytes, ...c.bytes]), starts };
}

/** Minimal reader for the recovery encoding. */
class Reader {
  private pos = 0;
  constructor(private readonly bytes: Uint8Array) {}
  u8(): number {
    const v = this.bytes[this.pos];
    if (v === undefined) throw new Error(`read past end at ${this.pos}`);
    this.pos += 1;
    return v;
  }
  u32(): number {
    const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.pos, 4);
    this.pos += 4;
    return view.getUint32(0, true);
  }
  str(): string {
    const n = this.u32();
    const s = Buffer.from(this.bytes.subarray(this.pos, this.pos + n)).toString('utf8');
    this.pos += n;
    return s;
  }
}

describe('remit-core Wasm component', () => {
  it('reports format version 2', () => {
    expect(core.formatVersion()).toBe(2);
  });

  it('matches every recovery fixture produced by the Rust tests', () => {
    const fixtures = JSON.parse(readFileSync(join(fixturesDir, 'recovery.json'), 'utf8')) as {
      cases: { name: string; log: string; recovery: string }[];
    };
    expect(fixtures.cases.length).toBeGreaterThan(20);
    for (const c of fixtures.cases) {
      expect({ name: c.name, out: toHex(core.recover(fromHex(c.log))) }).toEqual({ name: c.name, out: c.recovery });
    }
  });

  it('matches every admission fixture produced by the Rust tests', () => {
    const fixtures = JSON.parse(readFileSync(join(fixturesDir, 'admission.json'), 'utf8')) as {
      cases: { name: string; log: string; request: string; admission: string }[];
    };
    expect(fixtures.cases.length).toBeGreaterThan(10);
    for (const c of fixtures.cases) {
      const out = toHex(core.admit(fromHex(c.log), fromHex(c.request)));
      expect({ name: c.name, out }).toEqual({ name: c.name, out: c.admission });
    }
  });

  it('recovers a log built byte by byte in this test', () => {
    const log = handBuiltLog();
    const r = new Reader(core.recover(log));
    expect(r.u8()).toBe(1); // ok
    expect(r.u8()).toBe(1); // running
    expect([r.u32(), r.u32(), r.u32()]).toEqual([2, log.length, 0]);
    expect([r.str(), r.str(), r.str(), r.str()]).toEqual(['run-7', 'wf', 'v1', '']);
    const firstLen = 16 + (log[0] ?? 0);
    expect([r.u32(), r.u32(), r.u32(), r.u32()]).toEqual([1, firstLen, 1, firstLen]); // checkpoint, snapshot
    expect(r.u8()).toBe(1); // RUN_PURE
    expect(r.str()).toBe('b');
    expect([r.u32(), r.u32(), r.u32(), r.u32()]).toEqual([0, 0, 0, 0]); // effects, parked, claimed, lineage
  });

  it('recovers a format-2 log built byte by byte here, and names a broken link', () => {
    const { log, starts } = handBuiltV2Log();
    const r = new Reader(core.recover(log));
    expect(r.u8()).toBe(1); // ok
    expect(r.u8()).toBe(1); // running
    expect([r.u32(), r.u32(), r.u32()]).toEqual([3, log.length, 0]);
    expect([r.str(), r.str(), r.str(), r.str()]).toEqual(['run-8', 'wf', 'v1', '']);
    expect([r.u32(), r.u32(), r.u32(), r.u32()]).toEqual([0, 0, 0, 0]); // checkpoint, snapshot: RUN_STARTED
    expect(r.u8()).toBe(9); // AWAIT_ATTEMPT
    expect([r.str(), r.str()]).toEqual(['e', 'k1']);
    expect([r.u32(), r.u32(), r.u32(), r.u32()]).toEqual([1, 1, 2, starts[2]]);
    expect(r.u32()).toBe(1); // one effect node
    expect(r.str()).toBe('e');
    expect([r.u8(), r.u32(), r.u32()]).toEqual([1, 0, 1]); // intent-only, done 0, attempts 1

    // The last record's link computed from a wrong predecessor: BAD_LINK (12) at seq 2.
    const bad = Uint8Array.from(log);
    const lastLink = bad.length - 4;
    bad[lastLink] = (bad[lastLink] ?? 0) ^ 0x01;
    const e = core.recover(bad);
    expect([e[0], e[1]]).toEqual([0, 12]);
  });

  it('answers garbage with an error encoding, not a trap', () => {
    const out = core.recover(Uint8Array.from(text('definitely not a record log')));
    expect(out.length).toBe(11);
    expect(out[0]).toBe(0);
    expect(out[1]).toBe(1); // BAD_HEADER
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 16;
    const valid = handBuiltLog();
    for (let i = 0; i < 2000; i++) {
      const bytes = Uint8Array.from(valid);
      const flips = 1 + (next() % 4);
      for (let f = 0; f < flips; f++) bytes[next() % bytes.length] = next() & 0xff;
      const cut = bytes.subarray(0, next() % (bytes.length + 1));
      const r = core.recover(cut);
      expect(r[0] === 0 || r[0] === 1).toBe(true);
      const a = core.admit(cut, Uint8Array.from([next() % 5, next() & 0xff, 0, 0, 0]));
      expect(a.length).toBe(11);
    }
    expect(core.recover(new Uint8Array(0))[0]).toBe(1);
    expect(core.admit(new Uint8Array(0), new Uint8Array(0))[1]).toBe(8); // NO_RUN
  });

  it('does not grow memory over 10^5 calls', () => {
    expect(capturedMemory, 'could not observe the component memory').toBeDefined();
    const memory = capturedMemory as WasmMemory;
    const log = handBuiltLog();
    const request = Uint8Array.from([3, ...u32(1)]);
    const expected = toHex(core.recover(log));
    for (let i = 0; i < 1000; i++) core.recover(log); // warm up: the arena reaches its size
    const bytesAfterWarmup = memory.buffer.byteLength;
    for (let i = 0; i < 100_000; i++) {
      core.recover(log);
      if (i % 10 === 0) core.admit(log, request);
    }
    expect(memory.buffer.byteLength).toBe(bytesAfterWarmup);
    expect(toHex(core.recover(log))).toBe(expected);
  });
});
