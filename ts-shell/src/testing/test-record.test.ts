/**
 * testRecord, the framed record of the store contract suite: a seq or payload it cannot frame as
 * given is refused (ArgumentInvalidError), never framed as another record.
 */

import { describe, expect, it } from 'vitest';
import { ArgumentInvalidError } from '../errors.js';
import { testRecord } from './test-record.js';

describe('testRecord', () => {
  it('frames the seq and payload it is given', () => {
    const record = testRecord(0xffff_ffff, 'ab');
    expect(Array.from(record.subarray(0, 14))).toEqual([2, 0, 0, 0, 255, 255, 255, 255, 1, 2, 0, 0, 97, 98]);
    expect(testRecord(3)).toEqual(testRecord(3, 'payload-3'));
    expect(testRecord(0, Uint8Array.of(7))).toHaveLength(17);
  });

  it('refuses a seq that is not a u32 and a payload that is neither a string nor bytes', () => {
    // Before, -1 was framed as seq 4294967295, 1.5 as 1, and a payload {} was a RangeError.
    for (const seq of [-1, 1.5, 2 ** 32, NaN, '1', null]) {
      expect(() => testRecord(seq as number)).toThrow(ArgumentInvalidError);
      expect(() => testRecord(seq as number)).toThrow(/^testRecord\(seq\) must be an integer from 0 to 4294967295/);
    }
    for (const payload of [{}, null, 5, [1]]) {
      expect(() => testRecord(0, payload as never)).toThrow(/^testRecord\(payload\) must be a string or a Uint8Array/);
    }
  });
});
