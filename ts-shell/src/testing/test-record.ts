import { ArgumentInvalidError } from '../errors.js';

/**
 * A syntactically framed record (docs/log-format.md, version 1) with seq `seq` and an opaque
 * payload: what a store test needs, since a store checks only each record's seq field. The
 * checksums are not computed; a recovery core would reject these records, a store must not care.
 */
export function testRecord(seq: number, payload: string | Uint8Array = `payload-${seq}`): Uint8Array {
  // Checked: a seq of -1 was written as 4294967295 and 1.5 as 1, and a payload of another type was
  // a RangeError from the DataView (a store test would then test another record than it says).
  if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 0 || seq > 0xffff_ffff) {
    throw new ArgumentInvalidError('testRecord(seq)', 'an integer from 0 to 4294967295', typeof seq === 'number' ? String(seq) : seq === null ? 'null' : typeof seq);
  }
  if (typeof payload !== 'string' && !(payload instanceof Uint8Array)) {
    throw new ArgumentInvalidError('testRecord(payload)', 'a string or a Uint8Array', payload === null ? 'null' : Array.isArray(payload) ? 'an array' : typeof payload);
  }
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
