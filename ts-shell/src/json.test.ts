import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromUtf8, isWellFormedUnicode, jsonBytes, setOwnKey, utf8, utf8Length, type Json } from './json.js';

const encoder = new TextEncoder();
// Every UTF-16 unit, lone surrogates included (TextEncoder writes U+FFFD for those).
const anyText = fc.string({ unit: 'binary', maxLength: 64 });

describe('setOwnKey', () => {
  it('makes every key an own key as JSON.parse does, "__proto__" included, never the prototype', () => {
    const out: { [key: string]: Json } = {};
    setOwnKey(out, '__proto__', { x: 1 });
    setOwnKey(out, 'y', 2);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'y']);
    expect(out).toEqual(JSON.parse('{"__proto__":{"x":1},"y":2}'));
    expect(JSON.stringify(out)).toBe('{"__proto__":{"x":1},"y":2}');
  });
});

describe('isWellFormedUnicode', () => {
  it('is true exactly when no UTF-16 unit is a lone surrogate, that is when UTF-8 keeps the text (property)', () => {
    const units = fc.string({ unit: fc.constantFrom('a', 'é', '\ud83d', '\ude00', '\ud800', '\udfff', '\ud83d\ude00'), maxLength: 6 });
    fc.assert(
      fc.property(fc.oneof(anyText, units), (text) => {
        expect(isWellFormedUnicode(text)).toBe(!/\p{Cs}/u.test(text));
        if (isWellFormedUnicode(text)) expect(fromUtf8(utf8(text))).toBe(text);
        else expect(fromUtf8(utf8(text))).not.toBe(text);
      }),
      { numRuns: 2000 },
    );
    expect(isWellFormedUnicode('\ud83d\ude00')).toBe(true);
    expect(isWellFormedUnicode('\ude00\ud83d')).toBe(false);
  });
});

describe('utf8', () => {
  it('gives the bytes TextEncoder gives, as an array of its own, and utf8Length their count', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const bytes = utf8(text);
        expect(bytes).toEqual(encoder.encode(text));
        expect(utf8Length(text)).toBe(bytes.length);
        // A copy, not a view of shared scratch memory: callers keep and hand on these bytes.
        expect(bytes.byteOffset).toBe(0);
        expect(bytes.buffer.byteLength).toBe(bytes.length);
      }),
      { numRuns: 500 },
    );
  });

  it('does not let one result change another (the scratch buffer is reused)', () => {
    const first = utf8('first');
    utf8('second, longer');
    expect(new TextDecoder().decode(first)).toBe('first');
  });

  it('encodes texts longer than the scratch buffer, lone surrogates at every position', () => {
    for (const text of ['é'.repeat(20_000), '\ud800'.repeat(16 * 1024), `${'a'.repeat(16 * 1024 - 1)}\udfff`, 'x'.repeat(16 * 1024 + 1)]) {
      expect(utf8(text)).toEqual(encoder.encode(text));
      expect(utf8Length(text)).toBe(encoder.encode(text).length);
    }
  });

  it('jsonBytes is the UTF-8 of JSON.stringify', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonBytes(value as never)).toEqual(encoder.encode(JSON.stringify(value)));
      }),
      { numRuns: 200 },
    );
  });
});
