/**
 * A syntactically framed record (docs/log-format.md, version 1) with seq `seq` and an opaque
 * payload: what a store test needs, since a store checks only each record's seq field. The
 * checksums are not computed; a recovery core would reject these records, a store must not care.
 */
export function testRecord(seq: number, payload: string | Uint8Array = `payload-${seq}`): Uint8Array {
  const body = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
  const out = new Uint8Array(16 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length, true);
  view.setUint32(4, seq, true);
  out[8] = 1;
  out[9] = 2;
  out.set(body, 12);
  return out;
}
