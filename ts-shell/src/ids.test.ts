/**
 * Identifier formats (ids.ts): effect keys are unambiguous (the collision the first key form had,
 * and injectivity as a property), keys fit the log's names, instance ids are checked.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OptionInvalidError, RunIdInvalidError } from './errors.js';
import {
  checkEffectKeysFit, checkInstanceId, checkRunId, defaultInstanceId, effectKey, escapeKeyPart, MAX_KEY_BYTES, parseEffectKey, runIdProblem,
} from './ids.js';
import { utf8 } from './json.js';

describe('effect keys', () => {
  it('do not collide where `run:node:seq` did: run a:b node c vs run a node b:c, and the same with "/" and "%"', () => {
    // The first key form gave both the key "a:b:c:7".
    expect(`${'a:b'}:${'c'}:7`).toBe(`${'a'}:${'b:c'}:7`);
    expect(effectKey('a:b', 'c', 7)).toBe('a:b/c/7');
    expect(effectKey('a', 'b:c', 7)).toBe('a/b:c/7');
    expect(effectKey('a:b', 'c', 7)).not.toBe(effectKey('a', 'b:c', 7));
    expect(effectKey('a/b', 'c', 7)).toBe('a%2Fb/c/7');
    expect(effectKey('a', 'b/c', 7)).toBe('a/b%2Fc/7');
    expect(effectKey('a%2Fb', 'c', 7)).toBe('a%252Fb/c/7');
    expect(new Set([effectKey('a/b', 'c', 7), effectKey('a', 'b/c', 7), effectKey('a%2Fb', 'c', 7), effectKey('a', 'b%2Fc', 7)]).size).toBe(4);
  });

  it('are injective: distinct (run, node, seq) give distinct keys, and each key parses back (property)', () => {
    const part = fc.string({ unit: fc.constantFrom('a', 'b', ':', '/', '%', '2', 'F', '5', 'é'), minLength: 1, maxLength: 8 });
    const seq = fc.nat({ max: 0xffff_ffff });
    fc.assert(
      fc.property(part, part, seq, part, part, seq, (r1, n1, s1, r2, n2, s2) => {
        const same = r1 === r2 && n1 === n2 && s1 === s2;
        expect(effectKey(r1, n1, s1) === effectKey(r2, n2, s2)).toBe(same);
        expect(parseEffectKey(effectKey(r1, n1, s1))).toEqual({ runId: r1, node: n1, intentSeq: s1 });
      }),
      { numRuns: 3000 },
    );
  });

  it('parse only what effectKey writes', () => {
    for (const bad of ['a:b:3', 'a/b', 'a/b/c/3', 'a/b/x', 'a/b/03', 'a%2/b/3', 'a%41/b/3']) expect(parseEffectKey(bad), bad).toBeNull();
    expect(escapeKeyPart('%/')).toBe('%25%2F');
  });

  it('fit the log\'s 1024-byte names, or the run id is refused before anything is written', () => {
    const worst = '/'.repeat(200);
    expect(() => checkEffectKeysFit('r', [worst])).not.toThrow();
    expect(() => checkEffectKeysFit(worst, [worst])).toThrow(RunIdInvalidError);
    expect(() => checkEffectKeysFit(worst, [worst])).toThrow(/could reach 1212 bytes/);
    expect(() => checkEffectKeysFit('x'.repeat(200), ['y'.repeat(200)])).not.toThrow();
    expect(utf8(effectKey('x'.repeat(200), 'y'.repeat(200), 0xffff_ffff)).length).toBeLessThanOrEqual(MAX_KEY_BYTES);
    expect(() => checkEffectKeysFit(worst, [])).not.toThrow(); // a run without effects writes no key
  });
});

describe('run ids', () => {
  /** checkRunId's verdict: null when accepted, else the message's reason. */
  const verdict = (id: string): string | null => {
    try {
      checkRunId(id);
      return null;
    } catch (e) {
      expect(e).toBeInstanceOf(RunIdInvalidError);
      return (e as RunIdInvalidError).message;
    }
  };
  const fullRule = (id: string): string | null => {
    const problem = runIdProblem(id);
    return problem === null ? null : new RunIdInvalidError(id, problem).message;
  };

  it('get the same verdict on the printable-ASCII fast path as from the full Unicode rule (property)', () => {
    // Printable ASCII with spaces and lengths around the 200-byte limit, then any string at all.
    const ascii = fc.string({ unit: fc.oneof(fc.constant(' '), fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c))), minLength: 1, maxLength: 210 });
    const around = fc.integer({ min: 195, max: 205 }).chain((n) => fc.string({ unit: fc.constantFrom(' ', 'a', '~'), minLength: n, maxLength: n }));
    const any = fc.string({ unit: fc.oneof(fc.constant(' '), fc.constant('\u00a0'), fc.constant('\u200b'), fc.constant('\ud800'), fc.constant('\n'), fc.constant('\u007f'), fc.constant('é'), fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c))), minLength: 1, maxLength: 12 });
    fc.assert(fc.property(fc.oneof(ascii, around, any), (id) => {
      expect(verdict(id)).toBe(fullRule(id));
    }), { numRuns: 5000 });
  });

  it('are accepted or refused with the reason named, on both paths', () => {
    for (const ok of ['bench-run', 'a', '~', ' x ', 'run/1:2%3', 'é', 'a\u00a0b', 'x'.repeat(200)]) expect(verdict(ok), ok).toBeNull();
    expect(verdict('x'.repeat(201))).toMatch(/over 200 UTF-8 bytes/);
    expect(verdict('é'.repeat(101))).toMatch(/over 200 UTF-8 bytes/);
    expect(verdict('   ')).toMatch(/no visible character/);
    expect(verdict('\u200b\u00a0')).toMatch(/no visible character/);
    expect(verdict('a\nb')).toMatch(/control characters/);
    expect(verdict('a\u007fb')).toMatch(/control characters/);
    expect(verdict('a\ud800')).toMatch(/lone UTF-16 surrogate/);
    expect(() => checkRunId('')).toThrow(/non-empty string/);
    expect(() => checkRunId(7)).toThrow(RunIdInvalidError);
  });
});

describe('instance ids', () => {
  it('default to a fresh remit-<uuid>', () => {
    expect(defaultInstanceId()).toMatch(/^remit-[0-9a-f-]{36}$/);
    expect(defaultInstanceId()).not.toBe(defaultInstanceId());
  });

  it('are refused with OptionInvalidError when empty, too long or holding control characters', () => {
    for (const bad of ['', 'a'.repeat(201), 'a\nb', 42, null]) {
      expect(() => checkInstanceId(bad), String(bad)).toThrow(OptionInvalidError);
    }
    expect(() => checkInstanceId('pod-7/replica é')).not.toThrow();
  });
});
