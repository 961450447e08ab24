/**
 * displayText (display.ts), the one escaping of text printed for people: for any string, what it
 * prints holds no control character, bidi control, line separator or lone surrogate, reads back
 * as the string (so distinct strings print distinctly), and ordinary text prints as it is.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayText, preview, shown } from './display.js';
import { isWellFormedUnicode } from './json.js';

/** What no printed text may hold raw (the class display.ts escapes, but the backslash). */
const RAW = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;

/** The inverse of displayText: every `\u{hex}` read back as its character. */
function undisplay(text: string): string {
  return text.replace(/\\u\{([0-9a-f]+)\}/g, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
}

/** Any string, with the characters that matter over-represented: controls, bidi, lone surrogates, and the escape's own syntax. */
const tricky = fc.constantFrom(
  '\u001b', '\n', '\r', '\t', '\u0000', '\u007f', '\u0085', '\u009b', '\u202e', '\u2066', '\u200f', '\u061c', '\u2028', '\u2029',
  '\ud800', '\udfff', '\ud83d', '\ude00', '\ud83d\ude00', '\\', 'u', '{', '}', '1', 'b', '\\u{', '\\u{1b}', 'é', '日', ' ',
);
const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: tricky, maxLength: 24 }), fc.string({ unit: fc.oneof(tricky, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 32 }));

describe('displayText', () => {
  it('property: prints no control character, bidi control, separator or lone surrogate, for any string', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const shownText = displayText(text);
        expect(shownText).not.toMatch(RAW);
        expect(isWellFormedUnicode(shownText)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: is reversible, so distinct strings are printed distinctly', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(undisplay(displayText(text))).toBe(text);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(anyText, anyText, (a, b) => {
        fc.pre(a !== b);
        expect(displayText(a)).not.toBe(displayText(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: text without anything to escape is printed as it is', () => {
    const plain = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', 'é', '日本', '😀', '\u200d', "'", '"', '\\', '{', '}', 'u', '%', '/', '@'), maxLength: 24 });
    fc.assert(
      fc.property(plain, (text) => {
        fc.pre(!text.includes('\\u{'));
        expect(displayText(text)).toBe(text);
      }),
    );
  });

  it('writes each escaped character as \\u{hex}, and a backslash before u{ as \\u{5c}', () => {
    expect(displayText('a\u001b[2Jb')).toBe('a\\u{1b}[2Jb');
    expect(displayText('line\nFORGED\r')).toBe('line\\u{a}FORGED\\u{d}');
    expect(displayText('\u0000\t\u007f\u0085\u009b')).toBe('\\u{0}\\u{9}\\u{7f}\\u{85}\\u{9b}');
    expect(displayText('abc\u202edef\u2066\u2069')).toBe('abc\\u{202e}def\\u{2066}\\u{2069}');
    expect(displayText('lone \ud800 and \udfff, pair \ud83d\ude00')).toBe('lone \\u{d800} and \\u{dfff}, pair \ud83d\ude00');
    expect(displayText('\\u{1b}')).toBe('\\u{5c}u{1b}');
    expect(displayText('\\\u001b')).toBe('\\\\u{1b}');
    expect(displayText("C:\\temp 'it'\\''s' é 日本")).toBe("C:\\temp 'it'\\''s' é 日本");
  });

  it('shown escapes what is substituted, not the template\'s own text', () => {
    expect(shown`run ${'r\u202e'}:\n  ${'x\ny'} ${42}`).toBe('run r\\u{202e}:\n  x\\u{a}y 42');
  });
});

describe('preview', () => {
  it('keeps a short text as it is, and cuts a long one between whole code points, saying how much was left out', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.integer({ min: 1, max: 300 }), (text, max) => {
      const shown = preview(text, max);
      if (text.length <= max) {
        expect(shown).toBe(text);
        return;
      }
      const match = /^([^]*)… \((\d+) more characters\)$/u.exec(shown);
      expect(match).not.toBeNull();
      const kept = match![1]!;
      expect(text.startsWith(kept)).toBe(true);
      // Never half a surrogate pair at the cut.
      expect(/[\ud800-\udbff]$/.test(kept)).toBe(false);
      expect(kept.length + Number(match![2])).toBe(text.length);
      expect(kept.length).toBeGreaterThanOrEqual(max - 1);
    }));
  });
});

describe('renderInspection', () => {
  it('refuses what is not an inspection with ArgumentInvalidError saying what it got (it threw a bare TypeError)', async () => {
    const { renderInspection } = await import('./inspect.js');
    const { ArgumentInvalidError } = await import('./errors.js');
    for (const [value, got] of [[null, 'null'], [{}, 'an object without runId and records'], [[], 'an array'], ['r1', 'string'], [undefined, 'undefined']] as const) {
      expect(() => renderInspection(value as never)).toThrow(ArgumentInvalidError);
      expect(() => renderInspection(value as never)).toThrow(new RegExp(`^inspection must be what remit.inspect\\(runId\\) returned \\(a RunInspection\\); got ${got.replace(/[[\]]/g, '\\$&')}`));
    }
  });
});
