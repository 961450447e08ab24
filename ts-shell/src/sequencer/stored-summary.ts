/**
 * The bytes the sequencer stores as a run's recovery summary (docs/log-format.md, "Stored recovery
 * summary"): the core's summary followed by a CRC-32C over the summary's record count, byte
 * length, snapshot seq and the core's summary, so a summary damaged at rest is refused (and the
 * whole log read) instead of being fed to the core.
 */

import { crc32c } from '../core/crc32c.js';
import type { RecoverySummary } from '../store/store.js';

const CHECKSUM_BYTES = 4;

function checksumOf(recordCount: number, byteLength: number, snapshotSeq: number, core: Uint8Array): number {
  const framed = new Uint8Array(12 + core.length);
  const view = new DataView(framed.buffer);
  view.setUint32(0, recordCount, true);
  view.setUint32(4, byteLength, true);
  view.setUint32(8, snapshotSeq, true);
  framed.set(core, 12);
  return crc32c(framed);
}

/** The summary to store: the core's summary bytes with their checksum appended. */
export function sealSummary(recordCount: number, byteLength: number, snapshotSeq: number, core: Uint8Array): RecoverySummary {
  const summary = new Uint8Array(core.length + CHECKSUM_BYTES);
  summary.set(core, 0);
  new DataView(summary.buffer).setUint32(core.length, checksumOf(recordCount, byteLength, snapshotSeq, core), true);
  return { recordCount, byteLength, snapshotSeq, summary };
}

/** The core's summary bytes of a stored summary, or null when its checksum does not hold. */
export function openSummary(stored: RecoverySummary): Uint8Array | null {
  const { summary } = stored;
  if (summary.length < CHECKSUM_BYTES) return null;
  const core = summary.subarray(0, summary.length - CHECKSUM_BYTES);
  const recorded = new DataView(summary.buffer, summary.byteOffset, summary.byteLength).getUint32(core.length, true);
  const fits = [stored.recordCount, stored.byteLength, stored.snapshotSeq].every((n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff);
  return fits && recorded === checksumOf(stored.recordCount, stored.byteLength, stored.snapshotSeq, core) ? core : null;
}
