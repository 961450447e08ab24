/**
 * Summaries an earlier release stored are still read. Version 1 of the summary encoding (written
 * until reserved interrupt ids, commit 5361384 the last) lists every parked interrupt id and no
 * last claim; `summary-v1.json` holds that release's summaries after each record of three logs
 * (`make-summary-v1.mts`). From each, both cores must give what the whole log gives: fed the rest
 * of the log, the recovery and the summary (now version 2) byte for byte; and every admission from
 * it is the admission from the version-2 summary of the same prefix. Before, a version-1 summary
 * was refused (its layout had changed without a new version byte), so every run an earlier release
 * had summarised was read whole at each open, for good when the run had ended.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EMPTY_SUMMARY, type RecoveryCore } from 'remit/core';
import { fedParts, hex, recordBoundaries } from './compare.js';
import { loadCoresUnderTest } from './cores.js';
import { planRequests, requestsAtPrefix } from './requests.js';

const cores = await loadCoresUnderTest();
const fixture = JSON.parse(readFileSync(new URL('./summary-v1.json', import.meta.url), 'utf8')) as {
  logs: Array<{ name: string; log: string; summaries: string[] }>;
};
const bytes = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));
const coreList = (): RecoveryCore[] => [cores.reference, ...(cores.wasm === null ? [] : [cores.wasm])];

describe.each(fixture.logs)('version-1 summaries of the $name log', ({ log: logHex, summaries }) => {
  const log = bytes(logHex);
  const boundaries = recordBoundaries(log).slice(1);

  it('were written by the earlier release (version byte 1), one per record', () => {
    expect(summaries).toHaveLength(boundaries.length);
    for (const s of summaries) expect(bytes(s)[0]).toBe(1);
  });

  it.each(coreList().map((core) => [core.name, core] as const))('fed the rest of the log, give the whole log\'s recovery and summary (%s core)', (_name, core) => {
    const whole = fedParts(core.feedEncoded(EMPTY_SUMMARY, log), 0)!;
    expect(whole.summary[0]).toBe(2);
    summaries.forEach((summaryHex, i) => {
      const from = boundaries[i]!;
      const fed = fedParts(core.feedEncoded(bytes(summaryHex), log.subarray(from)), from);
      expect(fed, `summary after record ${i}`).not.toBeNull();
      expect(hex(fed!.recovery), `recovery from the summary after record ${i}`).toBe(hex(whole.recovery));
      expect(hex(fed!.summary), `summary from the summary after record ${i}`).toBe(hex(whole.summary));
    });
  });

  it.each(coreList().map((core) => [core.name, core] as const))('answer every admission as the version-2 summary of the same prefix (%s core)', (_name, core) => {
    const plan = planRequests(log);
    summaries.forEach((summaryHex, i) => {
      const current = fedParts(core.feedEncoded(EMPTY_SUMMARY, log.subarray(0, boundaries[i]!)), 0)!.summary;
      // Re-encoded through the core, the version-1 summary is the version-2 one.
      expect(hex(fedParts(core.feedEncoded(bytes(summaryHex), new Uint8Array(0)), boundaries[i]!)!.summary)).toBe(hex(current));
      for (const request of requestsAtPrefix(plan, i + 1)) {
        expect(hex(core.admitFromEncoded(bytes(summaryHex), request)), `request ${hex(request)} after record ${i}`).toBe(hex(core.admitFromEncoded(current, request)));
      }
    });
  });

  it('a version-1 summary that breaks version 1\'s rules is still refused (its ids out of order)', () => {
    // The completed log's last summary lists approve@2 ... approve@22 and legacy-approval: swap two ids' first bytes.
    const damaged = bytes(summaries[summaries.length - 1]!);
    const text = Buffer.from(damaged).toString('latin1');
    const first = text.indexOf('approve@2'), second = text.indexOf('legacy-approval');
    if (first < 0 || second < 0) return; // not this log's shape (the parked and failed logs list the same ids)
    damaged[first] = 0x7a; // 'z': now after every other id, out of order
    for (const core of coreList()) expect(core.feedEncoded(damaged, new Uint8Array(0))[0]).toBe(0);
  });
});
