/**
 * Both cores refuse an argument that is not bytes with the same typed error, before running; the
 * Wasm instance stays usable (a JavaScript error in its copy into linear memory used to count as a
 * trap and disable the instance for good).
 */

import { describe, expect, it } from 'vitest';
import { ArgumentInvalidError } from '../errors.js';
import { EMPTY_SUMMARY } from './types.js';
import { createCore, type CoreKind } from './index.js';

const NOT_BYTES: unknown[] = [null, undefined, 'log', 42, {}, [1, 2], new ArrayBuffer(4), new DataView(new ArrayBuffer(4))];

describe.each<CoreKind>(['reference', 'wasm'])('the %s core and arguments that are not bytes', (kind) => {
  it('refuses each with ArgumentInvalidError naming the call and argument, and keeps working', async () => {
    const core = await createCore(kind);
    const request = new Uint8Array([1]);
    const calls: Array<[string, (bad: never) => unknown]> = [
      ['recover(log)', (bad) => core.recover(bad)],
      ['recoverEncoded(log)', (bad) => core.recoverEncoded(bad)],
      ['admit(log)', (bad) => core.admit(bad, { tag: 'RESUME', interruptId: new Uint8Array([97]) })],
      ['admitEncoded(log)', (bad) => core.admitEncoded(bad, request)],
      ['admitEncoded(request)', (bad) => core.admitEncoded(new Uint8Array(), bad)],
      ['feed(summary)', (bad) => core.feed(bad, new Uint8Array())],
      ['feed(chunk)', (bad) => core.feed(EMPTY_SUMMARY, bad)],
      ['feedEncoded(chunk)', (bad) => core.feedEncoded(EMPTY_SUMMARY, bad)],
      ['admitFrom(summary)', (bad) => core.admitFrom(bad, { tag: 'RESUME', interruptId: new Uint8Array([97]) })],
      ['admitFromEncoded(request)', (bad) => core.admitFromEncoded(EMPTY_SUMMARY, bad)],
    ];
    for (const [argument, call] of calls) {
      for (const bad of NOT_BYTES) {
        let error: unknown;
        try {
          call(bad as never);
        } catch (e) {
          error = e;
        }
        expect(error, `${argument} with ${String(bad)}`).toBeInstanceOf(ArgumentInvalidError);
        expect(error).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', argument, expected: 'a Uint8Array' });
      }
    }
    expect(core.recover(new Uint8Array())).toMatchObject({ ok: true });
    expect(core.feed(EMPTY_SUMMARY, new Uint8Array()).ok).toBe(true);
  });
});

// ------------------------------------------------------------------ inputs that pass `instanceof Uint8Array`

import fc from 'fast-check';
import * as remitCore from './index.js';
import { encodeLog } from './codec.js';
import { RecordKind, RefusalReason, type LogRecord } from './types.js';
import { bytesArgument, MAX_CORE_ARGUMENT_BYTES } from './byte-arguments.js';

const t = (s: string) => new TextEncoder().encode(s);
const LOG = encodeLog([
  {
    kind: RecordKind.RUN_STARTED, seq: 0, runId: t('r'), workflow: t('w'), version: t('1'), fingerprint: t(''), definition: t(''),
    nodes: [{ name: t('i'), kind: 3 }], startNode: t('i'), state: t('{}'),
  },
  { kind: RecordKind.INTERRUPT_PARKED, seq: 1, node: t('i'), interruptId: t('x') },
] as LogRecord[]);

function detached(length: number): Uint8Array {
  const d = new Uint8Array(length);
  structuredClone(d.buffer, { transfer: [d.buffer] });
  return d;
}
/** A subclass whose length, byteLength, byteOffset and buffer getters lie. */
class Lying extends Uint8Array {
  constructor(bytes: Uint8Array, readonly claimed: number) {
    super(bytes);
  }
  override get length() { return this.claimed; }
  override get byteLength() { return this.claimed; }
  override get byteOffset() { return 3; }
}
function forged(): Uint8Array {
  const x = Object.create(Uint8Array.prototype) as Uint8Array;
  Object.defineProperty(x, Symbol.toStringTag, { value: 'Uint8Array' });
  Object.defineProperty(x, 'length', { value: 4 });
  return x;
}

/** A resizable ArrayBuffer of `length` bytes that can grow to `max` (ES2024; typed here by hand). */
function resizable(length: number, max: number): ArrayBuffer & { resize(n: number): void } {
  return new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer & { resize(n: number): void })(length, { maxByteLength: max });
}
/**
 * A view of `b` at `offset` in a resizable buffer, then the buffer resized to `size`: out of bounds
 * when `size` no longer holds it (its length and byteOffset then read 0), else the same bytes.
 * `tracking`: a length-tracking view (no length given), whose bytes are the buffer's from `offset`.
 */
function resizedView(b: Uint8Array, offset: number, wanted: number, tracking: boolean): { view: Uint8Array; bytes: Uint8Array | null } {
  const max = offset + b.length + 64;
  const size = Math.min(wanted, max);
  const buffer = resizable(offset + b.length, max);
  const view = tracking ? new Uint8Array(buffer, offset) : new Uint8Array(buffer, offset, b.length);
  view.set(b);
  buffer.resize(size);
  const inBounds = tracking ? size >= offset : size >= offset + b.length;
  return { view, bytes: inBounds ? new Uint8Array(buffer).slice(offset, tracking ? size : offset + b.length) : null };
}

type Input = { what: string; make: () => unknown; bytes: () => Uint8Array | null };
const base = fc.uint8Array({ maxLength: 64 });
const prefixOfLog = fc.nat({ max: LOG.length }).map((n) => LOG.slice(0, n));
const someBytes = fc.oneof(base, prefixOfLog);
const inputs: fc.Arbitrary<Input> = fc.oneof(
  someBytes.map((b) => ({ what: 'plain', make: () => b.slice(), bytes: () => b })),
  fc.tuple(someBytes, fc.nat({ max: 8 }), fc.nat({ max: 8 })).map(([b, pre, post]) => ({
    what: 'subarray view', bytes: () => b,
    make: () => { const big = new Uint8Array(pre + b.length + post).fill(0xab); big.set(b, pre); return big.subarray(pre, pre + b.length); },
  })),
  fc.tuple(someBytes, fc.nat({ max: 8 })).map(([b, pre]) => ({
    what: 'SharedArrayBuffer view', bytes: () => b,
    make: () => { const v = new Uint8Array(new SharedArrayBuffer(pre + b.length + 4), pre, b.length); v.set(b); return v; },
  })),
  someBytes.map((b) => ({ what: 'Buffer', make: () => Buffer.from(b), bytes: () => b })),
  fc.tuple(someBytes, fc.nat({ max: 2 ** 20 })).map(([b, claimed]) => ({ what: 'lying subclass', make: () => new Lying(b, claimed), bytes: () => b })),
  fc.nat({ max: 64 }).map((n) => ({ what: 'detached', make: () => detached(n), bytes: () => null })),
  fc.tuple(someBytes, fc.nat({ max: 8 }), fc.nat({ max: 140 }), fc.boolean()).map(([b, offset, size, tracking]) => ({
    what: `${tracking ? 'length-tracking ' : ''}view of ${b.length} bytes at ${offset} in a resizable buffer resized to ${size} (at most ${offset + b.length + 64})`,
    make: () => resizedView(b, offset, size, tracking).view, bytes: () => resizedView(b, offset, size, tracking).bytes,
  })),
  fc.constant({ what: 'Object.create(Uint8Array.prototype)', make: () => Object.create(Uint8Array.prototype) as unknown, bytes: () => null }),
  fc.constant({ what: 'forged toStringTag', make: forged, bytes: () => null }),
  fc.constant({ what: 'Proxy of a Uint8Array', make: () => new Proxy(new Uint8Array(4), {}), bytes: () => null }),
);

function outcome(call: () => unknown): unknown {
  try {
    return { value: call() };
  } catch (e) {
    return { error: (e as Error)?.constructor?.name, code: (e as { code?: unknown }).code, argument: (e as { argument?: unknown }).argument };
  }
}

describe('both cores on inputs that pass `instanceof Uint8Array` but are not plain bytes', async () => {
  const wasm = await createCore('wasm');
  const ref = await createCore('reference');
  const summaryOf = (core: typeof ref, b: Uint8Array) => { const f = core.feed(EMPTY_SUMMARY, b); return f.ok ? f.summary : EMPTY_SUMMARY; };
  const request = { tag: 'RESUME' as const, interruptId: t('x') };
  const calls: Array<[string, (core: typeof ref, a: () => unknown, b: () => unknown) => unknown]> = [
    ['recover', (c, a) => c.recover(a() as Uint8Array)],
    ['recoverEncoded', (c, a) => c.recoverEncoded(a() as Uint8Array)],
    ['admit', (c, a) => c.admit(a() as Uint8Array, request)],
    ['admitEncoded', (c, a, b) => c.admitEncoded(a() as Uint8Array, b() as Uint8Array)],
    ['feed(chunk)', (c, a) => c.feed(summaryOf(c, LOG.subarray(0, 40)), a() as Uint8Array)],
    ['feed(summary)', (c, a, b) => c.feed(a() as Uint8Array, b() as Uint8Array)],
    ['feedEncoded', (c, a, b) => c.feedEncoded(a() as Uint8Array, b() as Uint8Array)],
    ['admitFrom', (c, a) => c.admitFrom(a() as Uint8Array, request)],
    ['admitFromEncoded', (c, a, b) => c.admitFromEncoded(a() as Uint8Array, b() as Uint8Array)],
    ['admit(interruptId)', (c, a) => c.admit(LOG, { tag: 'RESUME', interruptId: a() as Uint8Array })],
  ];
  it.each(calls)('%s: the same answer or the same ArgumentInvalidError from both, and the Wasm core keeps working', (_, call) => {
    fc.assert(fc.property(inputs, inputs, (x, y) => {
      const w = outcome(() => call(wasm, x.make, y.make));
      const r = outcome(() => call(ref, x.make, y.make));
      expect(w).toEqual(r);
      // What a genuine view answers is what its bytes answer.
      const xb = x.bytes();
      const yb = y.bytes();
      if (xb !== null && yb !== null) expect(r).toEqual(outcome(() => call(ref, () => xb.slice(), () => yb.slice())));
      else if ('error' in (r as object)) expect(r).toMatchObject({ error: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID' });
      expect(wasm.recover(LOG)).toEqual(ref.recover(LOG));
    }), { numRuns: 150 });
  });

  it('refuses a detached log or summary with ArgumentInvalidError, and the Wasm core keeps working (it used to trap for good)', () => {
    for (const core of [wasm, ref]) {
      expect(() => core.recover(detached(8))).toThrow(ArgumentInvalidError);
      expect(() => core.feed(detached(8), LOG)).toThrow(/feed\(summary\) must be a Uint8Array; got a Uint8Array over a detached/);
      expect(() => core.feed(EMPTY_SUMMARY, detached(0))).toThrow(/feed\(chunk\)/);
      expect(() => core.admitFrom(detached(8), request)).toThrow(/admitFrom\(summary\)/);
      expect(() => core.recover(Object.create(Uint8Array.prototype))).toThrow(/recover\(log\) must be a Uint8Array; got an object that only looks like/);
      expect(core.recover(LOG)).toEqual(ref.recover(LOG));
    }
  });

  it('refuses a view left out of bounds by shrinking its resizable buffer, as a detached one; it read as no bytes (an empty log)', () => {
    const log = resizedView(LOG, 3, LOG.length + 3, false);
    const buffer = log.view.buffer as ArrayBuffer & { resize(n: number): void };
    const tracking = new Uint8Array(buffer, 8);
    buffer.resize(2); // under both views' offsets: they read length 0, byteOffset 0
    for (const core of [wasm, ref]) {
      expect(() => core.recover(log.view)).toThrow(/recover\(log\) must be a Uint8Array; got a Uint8Array over a detached or out-of-bounds buffer/);
      expect(() => core.recover(tracking)).toThrow(ArgumentInvalidError);
      expect(() => core.feed(EMPTY_SUMMARY, log.view)).toThrow(/feed\(chunk\)/);
      expect(() => core.admitFrom(tracking, request)).toThrow(/admitFrom\(summary\)/);
      expect(core.admit(LOG, { tag: 'RESUME', interruptId: log.view })).toMatchObject({ accepted: false, reason: RefusalReason.BAD_REQUEST });
      expect(core.recover(new Uint8Array(buffer, 0, 0))).toEqual(ref.recover(new Uint8Array(0))); // in bounds, empty: bytes like any other
      expect(core.recover(LOG)).toEqual(ref.recover(LOG));
    }
  });

  it('reads a typed request before the log or summary: a getter of the request that detaches or shrinks them meets the same refusal', () => {
    // The log was checked first, then the request's getters ran: a getter that detached the log's
    // buffer made the Wasm core's copy fail (CoreTrapError, as if the core were broken) and the
    // reference read no bytes (NO_RUN, or NO_RUN from an empty summary): the cores differed.
    const summary = ref.feed(EMPTY_SUMMARY, LOG);
    if (!summary.ok) throw new Error('no summary');
    for (const call of ['admit', 'admitFrom'] as const) {
      for (const how of ['detach', 'shrink'] as const) {
        const answers = [wasm, ref].map((core) => {
          const bytes = call === 'admit' ? LOG : summary.summary;
          const { view } = resizedView(bytes, 0, bytes.length, false);
          const request = {
            get tag() {
              if (how === 'detach') structuredClone(view.buffer, { transfer: [view.buffer as ArrayBuffer] });
              else (view.buffer as ArrayBuffer & { resize(n: number): void }).resize(0);
              return 'RESUME' as const;
            },
            interruptId: t('x'),
          };
          return outcome(() => core[call](view, request));
        });
        expect(answers[0], `${call}, ${how}`).toEqual({ error: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID', argument: `${call}(${call === 'admit' ? 'log' : 'summary'})` });
        expect(answers[1], `${call}, ${how}`).toEqual(answers[0]);
      }
    }
    // A getter may call the core itself (reentrancy): each call answers as alone.
    for (const core of [wasm, ref]) {
      const request = { get tag() { core.recover(LOG); core.feed(EMPTY_SUMMARY, LOG); return 'RESUME' as const; }, interruptId: t('x') };
      expect(core.admit(LOG, request)).toEqual(ref.admit(LOG, { tag: 'RESUME', interruptId: t('x') }));
      expect(core.admitFrom(summary.summary, request)).toEqual(ref.admit(LOG, { tag: 'RESUME', interruptId: t('x') }));
    }
  });

  it(`refuses more than MAX_CORE_ARGUMENT_BYTES (${MAX_CORE_ARGUMENT_BYTES}) in one call the same way from both, before either runs`, () => {
    // Zero-filled and never read: the pages are not touched.
    const huge = new Uint8Array(2 ** 32 - 1);
    const half = new Uint8Array(MAX_CORE_ARGUMENT_BYTES / 2 + 1);
    for (const core of [wasm, ref]) {
      expect(() => core.recover(huge)).toThrow(ArgumentInvalidError);
      expect(outcome(() => core.recover(huge))).toEqual({ error: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID', argument: 'recover(log)' });
      expect(outcome(() => core.feed(half, half))).toEqual({ error: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID', argument: 'feed(chunk)' });
      expect(outcome(() => core.admitEncoded(half, half))).toMatchObject({ argument: 'admitEncoded(request)' });
      expect(core.recover(LOG)).toEqual(ref.recover(LOG));
    }
  });
});

// ------------------------------------------------------------------ every export of remit/core that takes bytes

/** Each exported function of remit/core: how to call it with `bad` in each byte parameter (argument name), or [] when it takes no bytes. */
const BYTE_PARAMETERS: Record<string, Array<[string, (bad: never) => unknown]>> = {
  createCore: [], loadWasmCore: [], wasmCoreFromExports: [], wasmCoreModuleUrl: [], createReferenceCore: [],
  encodeRecord: [], encodeRecordV2: [], encodeLog: [], encodeLogV2: [], logDecodeError: [], linkOf: [],
  encodeRecovery: [], encodeAdmissionRequest: [], encodeAdmission: [], isWellFormedRequest: [], encodeFed: [],
  recover: [['recover(log)', (bad) => remitCore.recover(bad)]],
  feed: [['feed(summary)', (bad) => remitCore.feed(bad, new Uint8Array())], ['feed(chunk)', (bad) => remitCore.feed(EMPTY_SUMMARY, bad)]],
  admit: [['admit(log)', (bad) => remitCore.admit(bad, { tag: 'CONTINUE_FROM', seq: 0 })]],
  decodeRecordAt: [['decodeRecordAt(log)', (bad) => remitCore.decodeRecordAt(bad, 0)]],
  decodeLog: [['decodeLog(log)', (bad) => remitCore.decodeLog(bad)]],
  frameRecord: [['frameRecord(payload)', (bad) => remitCore.frameRecord(0, 1, bad)]],
  chainOf: [['chainOf(record)', (bad) => remitCore.chainOf(bad)]],
  concatBytes: [['concatBytes(parts)', (bad) => remitCore.concatBytes(bad)], ['concatBytes(parts[1])', (bad) => remitCore.concatBytes([new Uint8Array(1), bad])]],
  decodeRecovery: [['decodeRecovery(bytes)', (bad) => remitCore.decodeRecovery(bad)]],
  parseAdmissionRequest: [['parseAdmissionRequest(bytes)', (bad) => remitCore.parseAdmissionRequest(bad)]],
  decodeAdmission: [['decodeAdmission(bytes)', (bad) => remitCore.decodeAdmission(bad)]],
  decodeFed: [['decodeFed(bytes)', (bad) => remitCore.decodeFed(bad)]],
  crc32c: [['crc32c(bytes)', (bad) => remitCore.crc32c(bad)]],
  crc32cUpdate: [['crc32cUpdate(bytes)', (bad) => remitCore.crc32cUpdate(0xffffffff, bad, 0, 4)]],
  chainValueBefore: [['chainValueBefore(log)', (bad) => remitCore.chainValueBefore(bad, 4)]],
};

describe('bytes in a SharedArrayBuffer', () => {
  it('are copied once, so a core reads bytes no other thread can rewrite during the call; other views are not copied', () => {
    fc.assert(fc.property(someBytes, fc.nat({ max: 8 }), (b, pre) => {
      const shared = new Uint8Array(new SharedArrayBuffer(pre + b.length + 4), pre, b.length);
      shared.set(b);
      const given = bytesArgument('recover', 'log', shared);
      expect(given.buffer).not.toBeInstanceOf(SharedArrayBuffer);
      expect(given).toEqual(b);
      shared.fill(0xee); // another thread's write, after the copy
      expect(given).toEqual(b);
      const plain = b.slice();
      expect(bytesArgument('recover', 'log', plain).buffer).toBe(plain.buffer);
    }));
  });
});

describe('remit/core exports', () => {
  const functions = Object.entries(remitCore).filter(([, v]) => typeof v === 'function' && !/^class\b/.test(Function.prototype.toString.call(v)));

  it('every exported function is listed above with its byte parameters (a new export must say whether it takes bytes)', () => {
    expect(functions.map(([name]) => name).sort()).toEqual(Object.keys(BYTE_PARAMETERS).sort());
  });

  const BAD: unknown[] = [...NOT_BYTES, '123456789', detached(4), Object.create(Uint8Array.prototype), new Proxy(new Uint8Array(4), {})];
  it.each(Object.entries(BYTE_PARAMETERS).flatMap(([, calls]) => calls))('%s refuses what is not bytes with ArgumentInvalidError', (argument, call) => {
    for (const bad of BAD) {
      let error: unknown;
      try {
        call(bad as never);
      } catch (e) {
        error = e;
      }
      expect(error, `${argument} with ${Object.prototype.toString.call(bad)}`).toBeInstanceOf(ArgumentInvalidError);
      // concatBytes(parts) given an array names the element: concatBytes(parts[0]).
      expect((error as ArgumentInvalidError).argument.startsWith(argument.slice(0, -1))).toBe(true);
    }
  });

  it('the checked functions answer bytes as before', () => {
    expect(remitCore.crc32c(t('123456789'))).toBe(0xe3069283);
    expect(remitCore.crc32c(t('x123456789y'), 1, 10)).toBe(0xe3069283);
    expect(remitCore.recover(LOG)).toEqual(remitCore.reference.recover(LOG));
    expect(remitCore.decodeLog(LOG).records).toHaveLength(2);
    expect(remitCore.concatBytes([LOG.subarray(0, 3), LOG.subarray(3)])).toEqual(LOG);
  });
});

// ------------------------------------------------------------------ the numbers beside the bytes

describe('remit/core helpers and the offsets, seqs and bytes given beside their bytes', () => {
  // Before, these were read as other numbers: crc32c(b, 0, 100) of a 9-byte b and crc32c(b, -3)
  // answered a checksum of bytes that do not exist, frameRecord(-1, 300, p) wrote seq 4294967295
  // and kind 44, chainValueBefore(b, 100) answered 0, and decodeRecordAt threw a plain RangeError.
  const b = t('123456789');
  const OUT_OF_RANGE: Array<[string, () => unknown]> = [
    ['crc32c(start)', () => remitCore.crc32c(b, -3)],
    ['crc32c(start)', () => remitCore.crc32c(b, 1.5)],
    ['crc32c(start)', () => remitCore.crc32c(b, 'a' as never)],
    ['crc32c(start)', () => remitCore.crc32c(b, 10)],
    ['crc32c(end)', () => remitCore.crc32c(b, 0, 100)],
    ['crc32c(end)', () => remitCore.crc32c(b, 5, 2)],
    ['crc32c(end)', () => remitCore.crc32c(b, 0, NaN)],
    ['crc32cUpdate(value)', () => remitCore.crc32cUpdate(-1, b, 0, 4)],
    ['crc32cUpdate(value)', () => remitCore.crc32cUpdate('abc' as never, b, 0, 4)],
    ['crc32cUpdate(start)', () => remitCore.crc32cUpdate(0xffffffff, b, -1, 4)],
    ['crc32cUpdate(end)', () => remitCore.crc32cUpdate(0xffffffff, b, 0, 10)],
    ['crc32cUpdate(end)', () => remitCore.crc32cUpdate(0xffffffff, b, 0, undefined as never)],
    ['decodeRecordAt(offset)', () => remitCore.decodeRecordAt(LOG, -1)],
    ['decodeRecordAt(offset)', () => remitCore.decodeRecordAt(LOG, LOG.length + 1)],
    ['decodeRecordAt(expectedSeq)', () => remitCore.decodeRecordAt(LOG, 0, -2)],
    ['decodeRecordAt(expectedSeq)', () => remitCore.decodeRecordAt(LOG, 0, 0.5)],
    // Before, a context that was not a ChainContext switched the link check off without a word
    // (prevChain -1, the internal "no chain", or a context that is not an object) or read its
    // prevChain as another number (2^32 + c as c, a string as the number it spells).
    ['decodeRecordAt(context)', () => remitCore.decodeRecordAt(LOG, 0, 0, 5 as never)],
    ['decodeRecordAt(context)', () => remitCore.decodeRecordAt(LOG, 0, 0, 'x' as never)],
    ['decodeRecordAt(context.prevChain)', () => remitCore.decodeRecordAt(LOG, 0, 0, { prevChain: -1, v2Seen: true })],
    ['decodeRecordAt(context.prevChain)', () => remitCore.decodeRecordAt(LOG, 0, 0, { prevChain: 2 ** 32, v2Seen: true })],
    ['decodeRecordAt(context.prevChain)', () => remitCore.decodeRecordAt(LOG, 0, 0, { prevChain: '1' as never, v2Seen: true })],
    ['decodeRecordAt(context.prevChain)', () => remitCore.decodeRecordAt(LOG, 0, 0, { v2Seen: true } as never)],
    ['decodeRecordAt(context.v2Seen)', () => remitCore.decodeRecordAt(LOG, 0, 0, { prevChain: 0, v2Seen: 'no' as never })],
    ['frameRecord(seq)', () => remitCore.frameRecord(-1, 1, b)],
    ['frameRecord(seq)', () => remitCore.frameRecord(2 ** 32, 1, b)],
    ['frameRecord(kind)', () => remitCore.frameRecord(0, 300, b)],
    ['frameRecord(version)', () => remitCore.frameRecord(0, 1, b, 256)],
    ['frameRecord(prevChain)', () => remitCore.frameRecord(0, 1, b, 2, -1)],
    ['chainValueBefore(recordEnd)', () => remitCore.chainValueBefore(b, 100)],
    ['chainValueBefore(recordEnd)', () => remitCore.chainValueBefore(b, -1)],
    ['chainValueBefore(recordEnd)', () => remitCore.chainValueBefore(b, 2)],
    // Before, linkOf took anything and wrote it as some u32: linkOf('a', 'b') answered a number.
    ['linkOf(prevChain)', () => remitCore.linkOf('a' as never, 'b' as never)],
    ['linkOf(prevChain)', () => remitCore.linkOf(-1, 0)],
    ['linkOf(prevChain)', () => remitCore.linkOf(null as never, 0)],
    ['linkOf(recordCrc)', () => remitCore.linkOf(0, 2 ** 32)],
    ['linkOf(recordCrc)', () => remitCore.linkOf(0, 1.5)],
    ['linkOf(recordCrc)', () => remitCore.linkOf(0, undefined as never)],
  ];
  it.each(OUT_OF_RANGE)('%s out of range is ArgumentInvalidError naming it (case %#)', (argument, call) => {
    expect(outcome(call)).toMatchObject({ error: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID', argument });
  });

  it('every number within range is taken as before', () => {
    expect(remitCore.crc32c(b, 0, 9)).toBe(0xe3069283);
    expect(remitCore.crc32c(b, 9)).toBe(0);
    expect(remitCore.crc32c(b, 3, 3)).toBe(0);
    expect((remitCore.crc32cUpdate(0xffffffff, b, 0, 9) ^ 0xffffffff) >>> 0).toBe(0xe3069283);
    expect(remitCore.decodeRecordAt(LOG, LOG.length)).toEqual({ outcome: 'end', offset: LOG.length });
    expect(remitCore.decodeRecordAt(LOG, 0, 0)).toMatchObject({ outcome: 'record' });
    expect(remitCore.decodeRecordAt(LOG, 0, 0, { prevChain: 0, v2Seen: false })).toMatchObject({ outcome: 'record' });
    expect(remitCore.decodeRecordAt(LOG, 0, 0, { prevChain: 0xffffffff, v2Seen: false })).toMatchObject({ outcome: 'record' });
    const framed = remitCore.frameRecord(0xffffffff, 255, b, 7, 0xffffffff);
    expect([framed[4], framed[5], framed[6], framed[7], framed[8], framed[9]]).toEqual([255, 255, 255, 255, 7, 255]);
    expect(remitCore.chainValueBefore(b, 0)).toBe(0);
    expect(remitCore.linkOf(0xffffffff, 0)).toBe(remitCore.crc32c(new Uint8Array([255, 255, 255, 255, 0, 0, 0, 0])));
    const first = remitCore.decodeRecordAt(LOG, 0) as { end: number };
    expect(remitCore.chainValueBefore(LOG, LOG.length)).toBe(remitCore.chainOf(LOG.subarray(first.end)));
  });
});

describe('createCore(kind)', () => {
  it('refuses a kind that is not a string with ArgumentInvalidError, an unknown name with CoreUnavailableError (UNKNOWN_CORE)', async () => {
    // Before, createCore(1n) rejected with a bare TypeError (the message's JSON.stringify of a
    // BigInt) and createCore({}) with "the [object Object] recovery core is unavailable".
    const refusal = async (kind: unknown) => {
      try {
        await remitCore.createCore(kind as never);
      } catch (e) {
        return { error: (e as Error).constructor.name, code: (e as { code?: unknown }).code, argument: (e as { argument?: unknown }).argument, message: (e as Error).message };
      }
      return undefined;
    };
    for (const [kind, received] of [[1n, 'a bigint'], [{}, 'an Object'], [null, 'null'], [5, '5'], [Symbol('wasm'), 'a symbol'], [() => 'wasm', 'a function']] as const) {
      expect(await refusal(kind)).toEqual({
        error: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID', argument: 'createCore(kind)',
        message: `createCore(kind) must be "wasm" or "reference" (or nothing: "wasm"); got ${received}`,
      });
    }
    expect(await refusal('wsam')).toMatchObject({ error: 'CoreUnavailableError', code: 'REMIT_CORE_UNAVAILABLE' });
    expect((await remitCore.createCore()).name).toBe('wasm');
    expect((await remitCore.createCore('reference')).name).toBe('reference');
  });
});

describe('the encoders of remit/core and what is not an object', () => {
  it('refuse it with ArgumentInvalidError naming the call and argument, and encode as before', () => {
    // Before, encodeRecord(null), encodeLog(null), encodeAdmissionRequest(null), encodeRecovery(null)
    // and the rest were bare TypeErrors ("Cannot read properties of null").
    const calls: Array<[string, (bad: never) => unknown]> = [
      ['encodeRecord(record)', (bad) => remitCore.encodeRecord(bad)],
      ['encodeRecordV2(record)', (bad) => remitCore.encodeRecordV2(bad, 0)],
      ['encodeLog(records)', (bad) => remitCore.encodeLog(bad)],
      ['encodeLog(records[1])', (bad) => remitCore.encodeLog([decodedFirst(), bad])],
      ['encodeLogV2(records)', (bad) => remitCore.encodeLogV2(bad)],
      ['encodeLogV2(records[0])', (bad) => remitCore.encodeLogV2([bad])],
      ['encodeAdmissionRequest(request)', (bad) => remitCore.encodeAdmissionRequest(bad)],
      ['encodeRecovery(recovery)', (bad) => remitCore.encodeRecovery(bad)],
      ['encodeAdmission(admission)', (bad) => remitCore.encodeAdmission(bad)],
      ['encodeFed(fed)', (bad) => remitCore.encodeFed(bad)],
    ];
    for (const [argument, call] of calls) {
      for (const bad of [null, undefined, 'x', 7]) {
        expect(outcome(() => call(bad as never)), `${argument} with ${String(bad)}`).toMatchObject({ error: 'ArgumentInvalidError', code: 'REMIT_ARGUMENT_INVALID', argument });
      }
    }
    const records = remitCore.decodeLog(LOG).records;
    expect(remitCore.encodeLog(records)).toEqual(LOG);
    expect(remitCore.decodeLog(remitCore.encodeLogV2(records)).records).toEqual(records);
    expect(remitCore.encodeRecovery(remitCore.recover(LOG))).toEqual(remitCore.reference.recoverEncoded(LOG));
    expect(remitCore.encodeAdmissionRequest({ tag: 'CONTINUE_FROM', seq: 1 })).toEqual(Uint8Array.of(3, 1, 0, 0, 0));
    expect(outcome(() => remitCore.encodeAdmissionRequest({ tag: 'CONTINUE_FROM', seq: -1 }))).toMatchObject({ error: 'AdmissionRequestError' });
  });
});

/** outcome() with the refusal's expected and received texts too. */
function refusalOf(call: () => unknown): unknown {
  try {
    return { value: call() };
  } catch (e) {
    const fields = e as { code?: unknown; argument?: unknown; expected?: unknown; received?: unknown };
    return { error: (e as Error)?.constructor?.name, code: fields.code, argument: fields.argument, expected: fields.expected, received: fields.received };
  }
}

describe('chainOf and chainValueBefore on fewer than 4 bytes', () => {
  it('refuse them, naming the argument (chainOf read before the first byte and answered a made-up value)', () => {
    for (const short of [new Uint8Array(0), Uint8Array.of(1), Uint8Array.of(1, 2, 3)]) {
      expect(refusalOf(() => remitCore.chainOf(short))).toMatchObject({ error: 'ArgumentInvalidError', argument: 'chainOf(record)', received: `${short.length} bytes` });
      if (short.length > 0) {
        expect(refusalOf(() => remitCore.chainValueBefore(short, short.length))).toMatchObject({
          error: 'ArgumentInvalidError', argument: 'chainValueBefore(recordEnd)', expected: expect.stringContaining('hold no whole record'),
        });
      }
      expect(remitCore.chainValueBefore(short, 0)).toBe(0);
    }
    expect(remitCore.chainOf(Uint8Array.of(9, 1, 2, 3, 4))).toBe(0x04030201);
  });
});

describe('the error classes a user of remit/core catches', () => {
  it('are exported by remit/core, the same classes as remit\'s', async () => {
    const shell = await import('../index.js');
    for (const name of ['ArgumentInvalidError', 'OptionInvalidError', 'RemitError', 'CoreUnavailableError'] as const) {
      expect((remitCore as Record<string, unknown>)[name], name).toBe((shell as Record<string, unknown>)[name]);
    }
    expect(outcome(() => remitCore.recover('x' as never))).toMatchObject({ error: 'ArgumentInvalidError' });
    let thrown: unknown;
    try {
      remitCore.recover('x' as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(remitCore.ArgumentInvalidError);
    expect(thrown).toBeInstanceOf(remitCore.RemitError);
  });
});

describe('the answers\' encoders (encodeRecovery, encodeAdmission, encodeFed) and a field they cannot write', () => {
  const b = (text: string) => new TextEncoder().encode(text);
  /** A recovery with every part present: effects, lineage, a failure, an action with six fields. */
  const full = (): Record<string, unknown> => ({
    ok: true, status: 4, recordCount: 9, durableLen: 900, tornLen: 3, runId: b('r'), workflow: b('w'), version: b('1'), fingerprint: b('fp'),
    checkpointSeq: 7, checkpointOffset: 700, snapshotSeq: 5, snapshotOffset: 500,
    action: { tag: 'AWAIT_ATTEMPT', node: b('n'), key: b('k'), intentSeq: 6, attempt: 2, attemptSeq: 8, attemptOffset: 800 },
    effects: [{ node: b('n'), status: 1, doneCount: 0, attempts: 2 }], interruptsParked: 1, interruptsClaimed: 1,
    lineage: [{ sourceRunId: b('s'), sourceSeq: 3, runId: b('r'), forkSeq: 3, intent: b('{}') }],
    failure: { node: b('n'), code: b('C'), message: b('m') },
  });
  /** Every number and byte field of `value`, by its path, with a way to put another value there. */
  function leaves(value: unknown, path: string, out: Array<{ path: string; isBytes: boolean; set: (root: unknown, v: unknown) => unknown }>, at: (root: unknown) => Record<string, unknown>) {
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
    for (const [key, inner] of Object.entries(value)) {
      const here = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
      if (typeof inner === 'number' || inner instanceof Uint8Array) {
        out.push({ path: here, isBytes: inner instanceof Uint8Array, set: (root, v) => { at(root)[key] = v; return root; } });
      } else {
        leaves(inner, here, out, (root) => at(root)[key] as Record<string, unknown>);
      }
    }
    return out;
  }

  it('every number out of its range and every byte field that is not genuine bytes is refused, naming the field; the rest encodes as before', () => {
    const cases: Array<[string, () => Record<string, unknown>, (v: never) => Uint8Array, string]> = [
      ['encodeRecovery', full, (v) => remitCore.encodeRecovery(v), 'recovery'],
      ['encodeRecovery', () => ({ ok: false, code: 3, seq: 4, offset: 40, kind: 2 }), (v) => remitCore.encodeRecovery(v), 'recovery'],
      ['encodeAdmission', () => ({ accepted: false, reason: 5, detail: 0, seq: 4, offset: 40 }), (v) => remitCore.encodeAdmission(v), 'admission'],
      ['encodeFed', () => ({ ok: true, recovery: full(), summary: b('summary') }), (v) => remitCore.encodeFed(v), 'fed'],
    ];
    let checked = 0;
    for (const [operation, make, encode, root] of cases) {
      const encoded = encode(make() as never);
      const decoded = operation === 'encodeRecovery' ? remitCore.decodeRecovery(encoded) : operation === 'encodeAdmission' ? remitCore.decodeAdmission(encoded) : remitCore.decodeFed(encoded);
      expect(decoded).toEqual(make());
      for (const leaf of leaves(make(), root, [], (r) => r as Record<string, unknown>)!) {
        const bads: unknown[] = leaf.isBytes ? ['abc', [1, 2], detached(2), null] : [-1, 2 ** 32, 1.5, Number.NaN, '1', null];
        for (const bad of bads) {
          expect(outcome(() => encode(leaf.set(make(), bad) as never)), `${operation} ${leaf.path} = ${typeof bad}`).toMatchObject({
            error: 'ArgumentInvalidError', argument: `${operation}(${leaf.path})`,
          });
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(150);
    // Ranges narrower than a u8: a status, an effect status, an error code, a refusal reason.
    expect(outcome(() => remitCore.encodeRecovery({ ...full(), status: 5 } as never))).toMatchObject({ argument: 'encodeRecovery(recovery.status)' });
    expect(outcome(() => remitCore.encodeRecovery({ ok: false, code: 13, seq: 0, offset: 0, kind: 0 } as never))).toMatchObject({ argument: 'encodeRecovery(recovery.code)' });
    expect(outcome(() => remitCore.encodeAdmission({ accepted: true, reason: 3, detail: 0, seq: 0, offset: 0 } as never))).toMatchObject({ argument: 'encodeAdmission(admission.reason)' });
    expect(outcome(() => remitCore.encodeRecovery({ ...full(), action: { tag: 'JUMP' } } as never))).toMatchObject({ argument: 'encodeRecovery(recovery.action.tag)' });
    expect(outcome(() => remitCore.encodeRecovery({ ...full(), effects: undefined } as never))).toMatchObject({ argument: 'encodeRecovery(recovery.effects)' });
    // A failed run's failure may be left out: three empty fields, as before.
    const { failure: _left, ...withoutFailure } = full();
    expect(remitCore.decodeRecovery(remitCore.encodeRecovery(withoutFailure as never))).toMatchObject({ failure: { node: new Uint8Array(0), code: new Uint8Array(0), message: new Uint8Array(0) } });
  });
});

describe('the encoders and a byte field that is not plain bytes', () => {
  const oob = () => resizedView(t('abcd'), 4, 2, false).view;
  const bad: Array<[string, () => unknown, RegExp]> = [
    ['detached', () => detached(4), /detached or out-of-bounds/],
    ['detached, empty', () => detached(0), /detached or out-of-bounds/],
    ['out of bounds of a shrunk resizable buffer', oob, /detached or out-of-bounds/],
    ['Object.create(Uint8Array.prototype)', () => Object.create(Uint8Array.prototype) as unknown, /not a Uint8Array/],
    ['forged toStringTag', forged, /not a Uint8Array/],
  ];
  it.each(bad)('%s: RecordEncodeError or AdmissionRequestError naming the field (it was a bare TypeError, or read as no bytes)', (_, make, problem) => {
    const first = decodedFirst();
    for (const field of ['runId', 'state'] as const) {
      for (const encode of [(r: LogRecord) => remitCore.encodeRecord(r), (r: LogRecord) => remitCore.encodeRecordV2(r, 0), (r: LogRecord) => remitCore.encodeLog([r])]) {
        const thrown = outcome(() => encode({ ...first, [field]: make() } as LogRecord));
        expect(thrown).toMatchObject({ error: 'RecordEncodeError' });
        expect(() => encode({ ...first, [field]: make() } as LogRecord)).toThrow(new RegExp(`field ${field}: .*${problem.source}`));
      }
    }
    expect(() => remitCore.encodeAdmissionRequest({ tag: 'RESUME', interruptId: make() as Uint8Array }))
      .toThrow(new RegExp(`interruptId: .*${problem.source}`));
    expect(outcome(() => remitCore.encodeAdmissionRequest({ tag: 'RESUME', interruptId: make() as Uint8Array }))).toMatchObject({ error: 'AdmissionRequestError' });
  });

  it('a subclass whose length lies is encoded as the bytes it has, as the cores read it (its claimed length was written, padded with zeros)', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 16 }), fc.nat({ max: 64 }), (b, claimed) => {
      const first = decodedFirst() as Extract<LogRecord, { kind: 1 }>;
      const record = remitCore.encodeRecord({ ...first, state: new Lying(b, claimed) });
      expect(record).toEqual(remitCore.encodeRecord({ ...first, state: b }));
      expect(remitCore.encodeAdmissionRequest({ tag: 'RESUME', interruptId: new Lying(b, claimed) }))
        .toEqual(remitCore.encodeAdmissionRequest({ tag: 'RESUME', interruptId: b }));
      // Views of part of a buffer, Buffers and shared bytes are bytes like any other.
      const shared = new Uint8Array(new SharedArrayBuffer(b.length + 2), 1, b.length);
      shared.set(b);
      expect(remitCore.encodeRecord({ ...first, state: shared })).toEqual(record);
      expect(remitCore.encodeRecord({ ...first, state: Buffer.from(b) })).toEqual(record);
    }));
  });
});

function decodedFirst(): LogRecord {
  return remitCore.decodeLog(LOG).records[0]!;
}
