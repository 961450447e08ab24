/** Sizes shared by the REMIT and LangGraph workloads, so both carry the same state. */

/** The parked workflow's state carries one string of this many bytes besides its counter. */
export const PARKED_PAYLOAD_BYTES = 256;
/** Growth workload: bytes appended per step (growing state). */
export const ITEM_BYTES = 100;
/** Growth workload: the fixed-size state's constant field. */
export const FIXED_PAYLOAD_BYTES = 1000;
export const RESUME_VALUE = 'approved-by-bench';

/** Deterministic ASCII text of exactly `bytes` bytes (UTF-8 = length). */
export function fillerText(bytes: number): string {
  const unit = 'lorem ipsum dolor sit amet, consectetur adipiscing elit; ';
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}
