/**
 * Inputs at the size limits, too big for the random generators: node tables of 65535 and 65536
 * entries, node counts that overrun the payload, 1024/1025-byte names, a 1 MB state, a log of
 * 20 000 records. Both cores must agree (and the reference must say what the doc says).
 */
import { describe, expect, it } from 'vitest';
import { encodeLog, encodeRecord, frameRecord } from 'remit/core';
import { crc32c } from 'remit/core';
import { LogErrorCode, RecordKind, type LogRecord } from 'remit/core';
import { CoreComparison } from './compare.js';
import { loadCoresUnderTest } from './cores.js';
import { describeDivergence } from './report.js';

const cores = await loadCoresUnderTest();
const t = (s: string) => new TextEncoder().encode(s);

function started(nodeCount: number, over: Partial<Extract<LogRecord, { kind: 1 }>> = {}): LogRecord {
  const nodes = Array.from({ length: nodeCount }, (_, i) => ({ name: Uint8Array.of(i & 0xff, (i >>> 8) & 0xff, 0x6e), kind: 1 + (i % 3) }));
  return {
    kind: RecordKind.RUN_STARTED, seq: 0, runId: t('r'), workflow: t('w'), version: t('1'), fingerprint: t(''), definition: t(''),
    nodes, startNode: nodes[0]?.name ?? t('x'), state: t('{}'), ...over,
  };
}

const cases: Array<[string, () => Uint8Array, (r: ReturnType<typeof cores.reference.recover>) => void]> = [
  ['65535 nodes (the maximum)', () => encodeRecord(started(65535)), (r) => expect(r).toMatchObject({ ok: true, effects: expect.any(Array) })],
  ['65536 nodes', () => encodeRecord(started(65536)), (r) => expect(r).toMatchObject({ ok: false, code: LogErrorCode.BAD_NODE_TABLE })],
  ['node_count 0xFFFFFFFF with two entries', () => {
    const bytes = encodeRecord(started(2));
    // node_count sits after run_id(5) workflow(5) version(5) fingerprint(4) definition(4) = payload offset 23.
    bytes.set([0xff, 0xff, 0xff, 0xff], 12 + 23);
    return reseal(bytes);
  }, (r) => expect(r).toMatchObject({ ok: false, code: LogErrorCode.MALFORMED_PAYLOAD })],
  ['a 1 MB state', () => encodeRecord(started(3, { state: new Uint8Array(1 << 20).fill(0x20) })), (r) => expect(r).toMatchObject({ ok: true })],
  ['1024-byte run id, 1025-byte workflow', () => encodeRecord(started(1, { runId: new Uint8Array(1024).fill(0x61), workflow: new Uint8Array(1025).fill(0x62) })),
    (r) => expect(r).toMatchObject({ ok: false, code: LogErrorCode.MALFORMED_PAYLOAD })],
  ['20 000 records of pure steps', () => {
    const head = started(1, { nodes: [{ name: t('p'), kind: 1 }], startNode: t('p') });
    const steps = Array.from({ length: 19_999 }, (_, i): LogRecord => ({
      kind: RecordKind.NODE_COMPLETED, seq: i + 1, node: t('p'), next: t('p'), stateForm: i % 5 === 0 ? 0 : 1, state: t(`{"i":${i}}`),
    }));
    return encodeLog([head, ...steps]);
  }, (r) => expect(r).toMatchObject({ ok: true, recordCount: 20_000, snapshotSeq: 19_996 })],
  ['payload_len 0x3FFFFFFF (largest allowed) with few bytes: torn', () => {
    const f = frameRecord(0, 8, new Uint8Array(0));
    f.set([0xff, 0xff, 0xff, 0x3f], 0);
    return resealHeader(f);
  }, (r) => expect(r).toMatchObject({ ok: true, recordCount: 0, tornLen: 16 })],
];

/** Re-frame a record after editing its payload (correct header check and CRC). */
function reseal(bytes: Uint8Array): Uint8Array {
  return frameRecord(0, bytes[9]!, bytes.subarray(12, bytes.length - 4));
}

/** Fix the header check after editing header bytes (the record CRC is left as it is). */
function resealHeader(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  const check = crc32c(out, 0, 10) & 0xffff;
  out[10] = check & 0xff;
  out[11] = check >>> 8;
  return out;
}

describe('limits', () => {
  it.each(cases)('reference: %s', (_name, build, expectation) => {
    expectation(cores.reference.recover(build()));
  });
  it.skipIf(cores.wasm === null).each(cases)('wasm ≡ reference: %s', (_name, build) => {
    const log = build();
    const cmp = new CoreComparison(cores.wasm!, cores.reference);
    const d = cmp.recover(log) ?? cmp.admit(log, Uint8Array.of(2, 0, 0, 0, 0)) ?? cmp.admit(log, Uint8Array.of(3, 0x1f, 0x4e, 0, 0))
      ?? cmp.recover(log.subarray(0, log.length - 1)) ?? cmp.recover(log.subarray(0, Math.floor(log.length / 2)));
    if (d) throw new Error(describeDivergence(d));
  });
});
