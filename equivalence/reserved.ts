/**
 * Reserved interrupt ids (docs/core-api.md, "Transitions"), read here from the document, not from
 * a core: an id that reads `name@seq` — a non-empty name before the last `@`, then the seq in
 * decimal, 1 to 10 digits, no leading zero, at most 0xFFFF_FFFF — may be parked only by node
 * `name` at seq `seq` (DUPLICATE_INTERRUPT otherwise). The shell writes every id so. Used by the
 * oracle (the model lacks the rule), the split property's NEEDS_LOG exception and the requests.
 */

export interface ReservedId {
  name: Uint8Array;
  seq: number;
}

/** The node name and seq `id` names when it is reserved, else null. */
export function reservedInterruptId(id: Uint8Array): ReservedId | null {
  const at = id.lastIndexOf(0x40);
  if (at < 1) return null;
  const digits = id.subarray(at + 1);
  if (digits.length < 1 || digits.length > 10 || (digits.length > 1 && digits[0] === 0x30)) return null;
  let seq = 0;
  for (const d of digits) {
    if (d < 0x30 || d > 0x39) return null;
    seq = seq * 10 + (d - 0x30);
  }
  return seq <= 0xffff_ffff ? { name: id.subarray(0, at), seq } : null;
}

export const sameBytes = (x: Uint8Array, y: Uint8Array): boolean => x.length === y.length && x.every((v, i) => v === y[i]);

/** Whether a park by `node` at `seq` of the id `id` breaks the rule: the id is reserved and names another node or seq. */
export function breaksReservedRule(node: Uint8Array, id: Uint8Array, seq: number): boolean {
  const reserved = reservedInterruptId(id);
  return reserved !== null && (reserved.seq !== seq || !sameBytes(reserved.name, node));
}
