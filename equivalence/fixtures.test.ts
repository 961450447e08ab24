/**
 * The committed fixtures: decoded records and expected encodings, checked against the codec, the
 * reference core and (when built) the Wasm core. A few expectations are restated by hand below, so
 * a fixture cannot silently drift with the reference.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chainValueBefore, decodeLog, encodeRecord, encodeRecordV2 } from 'remit/core';
import { decodeRecovery } from 'remit/core';
import { LogErrorCode, RunStatus } from 'remit/core';
import { hex } from './compare.js';
import { loadCoresUnderTest } from './cores.js';
import { decodedFixtureFields, FIXTURES_DIR, projectToApiV1, type FixtureJson } from './fixtures.js';

const cores = await loadCoresUnderTest();
const names = readdirSync(FIXTURES_DIR).filter((f) => f.endsWith('.bin')).map((f) => f.slice(0, -4)).sort();
const load = (name: string) => ({
  log: new Uint8Array(readFileSync(`${FIXTURES_DIR}${name}.bin`)),
  json: JSON.parse(readFileSync(`${FIXTURES_DIR}${name}.json`, 'utf8')) as FixtureJson,
});

/** Expectations written by hand from docs/core-api.md, independent of the reference core. */
const byHand: Record<string, {
  status?: RunStatus; action?: string; error?: LogErrorCode; errorSeq?: number; tornLen?: number; attempts?: number; nextAttempt?: number;
}> = {
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
  'v2-completed-run': { status: RunStatus.COMPLETED, action: 'NONE', attempts: 1 },
  'v2-attempted': { status: RunStatus.RUNNING, action: 'AWAIT_ATTEMPT', attempts: 1 },
  'v2-released': { status: RunStatus.RUNNING, action: 'INVOKE_EFFECT', attempts: 1, nextAttempt: 2 },
  'v2-taken-over': { status: RunStatus.RUNNING, action: 'PARK', attempts: 2 },
  'v2-done-without-attempt': { error: LogErrorCode.IMPOSSIBLE_ORDER, errorSeq: 3 },
  'v2-bad-link': { error: LogErrorCode.BAD_LINK, errorSeq: 3 },
  'v2-format-1-after-2': { error: LogErrorCode.BAD_VERSION, errorSeq: 2 },
  'mixed-upgraded': { status: RunStatus.RUNNING, action: 'PARK', attempts: 1 },
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
        records: json.records, formats: json.formats, offsets: json.offsets, durable_len: json.durable_len, torn_len: json.torn_len,
        codec_error: json.codec_error,
      });
      const d = decodeLog(log);
      d.records.forEach((r, i) => {
        const start = d.offsets[i]!;
        const again = d.versions[i] === 2 ? encodeRecordV2(r, chainValueBefore(log, start)) : encodeRecord(r);
        expect(hex(again)).toBe(hex(log.subarray(start, d.offsets[i + 1] ?? d.durableLen)));
      });
    });
    it('recovers as written by hand', () => {
      const r = decodeRecovery(Buffer.from(json.recovery_hex, 'hex'));
      const want = byHand[name]!;
      if (want.error !== undefined) {
        expect(r).toMatchObject({ ok: false, code: want.error, seq: want.errorSeq });
      } else {
        expect(r).toMatchObject({ ok: true, status: want.status, action: { tag: want.action }, tornLen: want.tornLen ?? 0 });
        if (r.ok) expect(r.effects.map((e) => e.attempts)).toEqual(r.effects.map(() => want.attempts ?? 0));
        if (want.nextAttempt !== undefined) expect(r).toMatchObject({ action: { nextAttempt: want.nextAttempt } });
      }
    });
    // Only a format-1 log has an API-1 encoding to keep (format 2 postdates API 1).
    if (!json.formats.includes(2)) {
      it('a format-1 log recovers exactly as before: the API-2 encoding projects onto the committed API-1 one', () => {
        expect(json.recovery_api1_hex).toMatch(/^[0-9a-f]+$/);
        expect(hex(projectToApiV1(Buffer.from(json.recovery_hex, 'hex')))).toBe(json.recovery_api1_hex);
      });
    }
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
