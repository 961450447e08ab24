/**
 * displayText (display.ts), the one escaping of text printed for people: for any string, what it
 * prints holds no control character, bidi control, line separator or lone surrogate, reads back
 * as the string (so distinct strings print distinctly), and ordinary text prints as it is.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayText, preview, shown } from './display.js';
import { isWellFormedUnicode } from './json.js';

/**
 * What no printed text may hold raw (the class display.ts escapes, but the backslash): controls,
 * separators, bidi controls, and what shows as nothing (the default-ignorable code points but the
 * joiners, variation selectors and subdivision tags emoji and scripts are written with; U+2800).
 */
const RAW = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\u2800]|(?![\u200c\u200d\ufe00-\ufe0f\u{e0020}-\u{e007f}\u{e0100}-\u{e01ef}])\p{Default_Ignorable_Code_Point}/u;

/** The inverse of displayText: every `\u{hex}` read back as its character. */
function undisplay(text: string): string {
  return text.replace(/\\u\{([0-9a-f]+)\}/g, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
}

/** Any string, with the characters that matter over-represented: controls, bidi, lone surrogates, and the escape's own syntax. */
const tricky = fc.constantFrom(
  '\u001b', '\n', '\r', '\t', '\u0000', '\u007f', '\u0085', '\u009b', '\u202e', '\u2066', '\u200f', '\u061c', '\u2028', '\u2029',
  '\ud800', '\udfff', '\ud83d', '\ude00', '\ud83d\ude00', '\\', 'u', '{', '}', '1', 'b', '\\u{', '\\u{1b}', 'é', '日', ' ',
  // What shows as nothing, escaped, and the joiners and selectors kept.
  '\u200b', '\u2060', '\ufeff', '\u00ad', '\u3164', '\u2800', '\u180e', '\u{e0001}', '\u{1d173}', '\u200d', '\u200c', '\ufe0f', '\u{e0067}',
);
const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: tricky, maxLength: 24 }), fc.string({ unit: fc.oneof(tricky, fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 32 }));

describe('displayText', () => {
  it('property: prints no control character, bidi control, separator, character that shows as nothing or lone surrogate, for any string', () => {
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

  it('escapes what shows as nothing, so that two run ids differing only by it print differently (from a security review)', () => {
    const ids = [
      'order-1', 'order-1\u200b', 'order-1\u2060', 'order-1\ufeff', 'order-1\u{e0001}', 'order\u00ad-1', 'order-1\u3164', 'order-1\u2800', 'order-1\u180e',
      // From the review of own changes: more that show as nothing.
      'order-1\u206a', 'order-1\u034f', 'order-1\u180b', 'order-1\u17b4', 'order-1\ufff0', 'order-1\u{1d173}', 'order-1\u{e0080}',
    ];
    expect(new Set(ids.map(displayText)).size).toBe(ids.length);
    for (const id of ids.slice(1)) expect(displayText(id)).toMatch(/\\u\{[0-9a-f]+\}/);
    // What emoji and scripts are written with is kept: the joiners, a variation selector, a subdivision flag's tags.
    const scotland = '\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}';
    expect(displayText(`👩\u200d💻 \u0645\u200c\u06cc ❤\ufe0f ${scotland}`)).toBe(`👩\u200d💻 \u0645\u200c\u06cc ❤\ufe0f ${scotland}`);
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

  it('refuses an inspection with a field cut out or of another type, naming that field (it threw a bare TypeError)', async () => {
    const { renderInspection } = await import('./inspect.js');
    const { ArgumentInvalidError } = await import('./errors.js');
    const { createRemit, END, openMemoryStore, workflow } = await import('./index.js');
    const { z } = await import('zod');
    const wf = workflow({ name: 'w', version: '1', state: z.object({ n: z.number() }) }).pure('a', { run: (s) => ({ n: s.n + 1 }), next: END }).build();
    const remit = await createRemit({ store: openMemoryStore(), workflows: [wf], core: 'reference' });
    await remit.start(wf, { n: 0 }, { runId: 'r' });
    const whole = await remit.inspect('r');
    // A JSON round trip (an inspection sent over HTTP) renders as the original does.
    expect(renderInspection(JSON.parse(JSON.stringify(whole)))).toBe(renderInspection(whole));
    const cuts: Array<[string, (i: Record<string, unknown> & { records: unknown[] }) => void, RegExp]> = [
      ['records[0]', (i) => { i.records[0] = null; }, /^inspection\.records\[0\] must be an object, as remit\.inspect\(runId\) returns it; got null \[run r\]$/],
      ['records[1].kind', (i) => { delete (i.records[1] as Record<string, unknown>).kind; }, /^inspection\.records\[1\]\.kind must be a string, .*; got undefined/],
      ['records[0].committedAt', (i) => { (i.records[0] as Record<string, unknown>).committedAt = 5; }, /^inspection\.records\[0\]\.committedAt must be a string, .*; got number/],
      ['totals', (i) => { delete i.totals; }, /^inspection\.totals must be an object/],
      ['totals.bytes', (i) => { (i.totals as Record<string, unknown>).bytes = '9'; }, /^inspection\.totals\.bytes must be a number/],
      ['lineage', (i) => { i.lineage = {}; }, /^inspection\.lineage must be an array, .*; got object/],
      ['effects[0]', (i) => { i.effects = [7]; }, /^inspection\.effects\[0\] must be an object/],
      ['status', (i) => { i.status = undefined; }, /^inspection\.status must be a string/],
    ];
    for (const [, cut, message] of cuts) {
      const copy = JSON.parse(JSON.stringify(whole)) as Record<string, unknown> & { records: unknown[] };
      cut(copy);
      expect(() => renderInspection(copy as never)).toThrow(ArgumentInvalidError);
      expect(() => renderInspection(copy as never)).toThrow(message);
    }
    await remit.close();
  });
});
