/**
 * The committed fixtures: decoded records and expected encodings, checked against the codec, the
 * reference core and (when built) the Wasm core. A few expectations are restated by hand below, so
 * a fixture cannot silently drift with the reference.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeLog, encodeRecord } from 'remit/core';
import { decodeRecovery } from 'remit/core';
import { LogErrorCode, RunStatus } from 'remit/core';
import { hex } from './compare.js';
import { loadCoresUnderTest } from './cores.js';
import { decodedFixtureFields, FIXTURES_DIR, type FixtureJson } from './fixtures.js';

const cores = await loadCoresUnderTest();
const names = readdirSync(FIXTURES_DIR).filter((f) => f.endsWith('.bin')).map((f) => f.slice(0, -4)).sort();
const load = (name: string) => ({
  log: new Uint8Array(readFileSync(`${FIXTURES_DIR}${name}.bin`)),
  json: JSON.parse(readFileSync(`${FIXTURES_DIR}${name}.json`, 'utf8')) as FixtureJson,
});

/** Expectations written by hand from docs/core-api.md, independent of the reference core. */
const byHand: Record<string, { status?: RunStatus; action?: string; error?: LogErrorCode; errorSeq?: number; tornLen?: number }> = {
  'empty': { status: RunStatus.EMPTY, action: 'NONE' },
  'completed-run': { status: RunStatus.COMPLETED, action: 'NONE' },
  'parked': { status: RunStatus.PARKED, action: 'AWAIT_RESUME' },
  'intent-only': { status: RunStatus.RUNNING, action: 'INVOKE_EFFECT' },
  'forked': { status: RunStatus.RUNNING, action: 'INVOKE_EFFECT' },
  'failed': { status: RunStatus.FAILED, action: 'NONE' },
  'torn-tail': { status: RunStatus.RUNNING, action: 'INVOKE_EFFECT', tornLen: 20 },
  'bad-checksum': { error: LogErrorCode.BAD_CHECKSUM, errorSeq: 2 },
  'second-claim': { error: LogErrorCode.IMPOSSIBLE_ORDER, errorSeq: 7 },
  'bad-node-table': { error: LogErrorCode.BAD_NODE_TABLE, errorSeq: 0 },
  'junk-after-log': { status: RunStatus.RUNNING, action: 'RUN_PURE', tornLen: 7 },
};

describe('fixtures', () => {
  it('are all there', () => {
    expect(names).toEqual(Object.keys(byHand).sort());
  });

  describe.each(names)('%s', (name) => {
    const { log, json } = load(name);
    it('decodes to the committed records, and the records re-encode to the committed bytes', () => {
      expect(json.log_hex).toBe(hex(log));
      expect(decodedFixtureFields(log)).toEqual({
        records: json.records, offsets: json.offsets, durable_len: json.durable_len, torn_len: json.torn_len, codec_error: json.codec_error,
      });
      const d = decodeLog(log);
      d.records.forEach((r, i) => expect(hex(encodeRecord(r))).toBe(hex(log.subarray(d.offsets[i]!, d.offsets[i + 1] ?? d.durableLen))));
    });
    it('recovers as written by hand', () => {
      const r = decodeRecovery(Buffer.from(json.recovery_hex, 'hex'));
      const want = byHand[name]!;
      if (want.error !== undefined) {
        expect(r).toMatchObject({ ok: false, code: want.error, seq: want.errorSeq });
      } else {
        expect(r).toMatchObject({ ok: true, status: want.status, action: { tag: want.action }, tornLen: want.tornLen ?? 0 });
      }
    });
    it('the reference core gives the committed encodings', () => {
      expect(hex(cores.reference.recoverEncoded(log))).toBe(json.recovery_hex);
      for (const a of json.admissions) {
        expect([a.request, hex(cores.reference.admitEncoded(log, Buffer.from(a.request_hex, 'hex')))]).toEqual([a.request, a.admission_hex]);
      }
    });
    it.skipIf(cores.wasm === null)('the Wasm core gives the committed encodings', () => {
      expect(hex(cores.wasm!.recoverEncoded(log))).toBe(json.recovery_hex);
      for (const a of json.admissions) {
        expect([a.request, hex(cores.wasm!.admitEncoded(log, Buffer.from(a.request_hex, 'hex')))]).toEqual([a.request, a.admission_hex]);
      }
    });
  });
});
