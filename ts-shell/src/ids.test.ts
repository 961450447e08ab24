/**
 * Identifier formats (ids.ts): effect keys are unambiguous (the collision the first key form had,
 * and injectivity as a property), keys fit the log's names, instance ids are checked.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OptionInvalidError, RunIdInvalidError } from './errors.js';
import {
  checkEffectKeysFit, checkInstanceId, checkRunId, defaultForkRunId, defaultInstanceId, defaultRunId, effectKey, escapeKeyPart, MAX_KEY_BYTES,
  MAX_RUN_ID_BYTES, parseEffectKey, runIdProblem,
} from './ids.js';
import { isWellFormedUnicode, utf8 } from './json.js';
import { MAX_NODE_NAME_BYTES } from './workflow/workflow.js';

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
    // Blank to the eye, letters and symbols to Unicode: accepted (runs may be stored under them), printed escaped (display.test.ts).
    for (const blank of ['\u3164', '\u2800']) expect(verdict(blank), JSON.stringify(blank)).toBeNull();
    expect(verdict('a\nb')).toMatch(/control characters/);
    expect(verdict('a\u007fb')).toMatch(/control characters/);
    expect(verdict('a\ud800')).toMatch(/lone UTF-16 surrogate/);
    expect(() => checkRunId('')).toThrow(/non-empty string/);
    expect(() => checkRunId(7)).toThrow(RunIdInvalidError);
  });

  it('an id that is not a string is described without converting it (a null-prototype object, from querystring.parse, has no conversion)', () => {
    const hostile = [Object.create(null), { toString: () => { throw new Error('toString threw'); } }, Symbol('s'), 12n, [1, 2], null, undefined];
    const described = hostile.map((id) => {
      try {
        checkRunId(id);
        return 'accepted';
      } catch (error) {
        expect(error).toBeInstanceOf(RunIdInvalidError);
        return (error as Error).message;
      }
    });
    expect(described).toEqual([
      'invalid run id an object: must be a non-empty string',
      'invalid run id an object: must be a non-empty string',
      'invalid run id a symbol: must be a non-empty string',
      'invalid run id the bigint 12: must be a non-empty string',
      'invalid run id an object: must be a non-empty string',
      'invalid run id null: must be a non-empty string',
      'invalid run id undefined: must be a non-empty string',
    ]);
  });
});

describe('default run ids', () => {
  /** Characters that stress the rule: multi-byte, astral (a surrogate pair), "%" and "/" (3 bytes in a key), invisible. */
  const visibleOrNot = ['a', 'Z', '7', '-', '%', '/', ' ', 'é', '注', '🦀', '\u0301', '\u200b', '\ufeff'];
  /** Legal in a workflow name, never in a run id: controls and separators. */
  const controls = ['\n', '\u0000', '\u007f', '\u0085', '\u2028', '\u2029'];
  const unitOf = (pool: string[]) => fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...pool) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
  );
  /** The first code points of `text` that fit in `max` UTF-8 bytes. */
  const fit = (text: string, max: number) => {
    let out = '';
    for (const c of text) {
      if (utf8(out + c).length > max) break;
      out += c;
    }
    return out;
  };
  /** Strings of every length up to past the limit (fast-check's default size would keep them short), cut to fit. */
  const upTo200Bytes = (pool: string[]) => fc.integer({ min: 1, max: 220 })
    .chain((n) => fc.array(unitOf(pool), { minLength: n, maxLength: n }))
    .map((units) => fit(units.join(''), 200))
    .filter((text) => text.length > 0);
  /** A valid workflow name (build()'s rule): non-empty, well-formed, at most 200 UTF-8 bytes. */
  const workflowName = upTo200Bytes([...visibleOrNot, ...controls]).filter((n) => isWellFormedUnicode(n) && utf8(n).length <= MAX_NODE_NAME_BYTES);
  /** A valid run id (checkRunId's rule), often long. */
  const runId = upTo200Bytes(visibleOrNot).filter((id) => runIdProblem(id) === null);
  /** The node names that make a run id's keys longest: 200 bytes, every one 3 bytes in a key. */
  const worstNodes = ['/'.repeat(MAX_NODE_NAME_BYTES), '%'.repeat(MAX_NODE_NAME_BYTES)];

  /** What start and fork check of a run id: the rule, and that its effect keys fit with any node names. */
  const acceptedAtStartAndFork = (id: string) => {
    checkRunId(id);
    checkEffectKeysFit(id, worstNodes);
  };

  it('for any valid workflow name, the default start id passes the rule and the effect-key check (property)', () => {
    fc.assert(fc.property(workflowName, (name) => {
      const id = defaultRunId(name);
      acceptedAtStartAndFork(id);
      expect(id).toMatch(/-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }), { numRuns: 3000 });
  });

  it('for any valid run id, the default fork id passes the rule and the effect-key check (property)', () => {
    fc.assert(fc.property(runId, (source) => {
      const id = defaultForkRunId(source);
      acceptedAtStartAndFork(id);
      expect(id).toMatch(/\.fork-[0-9a-f]{8}$/);
      // The prefix is the start of the source id, cut between whole characters.
      const prefix = id.slice(0, id.length - '.fork-xxxxxxxx'.length);
      expect(source.startsWith(prefix)).toBe(true);
    }), { numRuns: 3000 });
  });

  it('keep short names whole, and cut long ones on a character boundary', () => {
    expect(defaultRunId('refund')).toMatch(/^refund-[0-9a-f-]{36}$/);
    expect(defaultForkRunId('order-1042')).toMatch(/^order-1042\.fork-[0-9a-f]{8}$/);
    const long = 'w'.repeat(180);
    expect(utf8(defaultRunId(long)).length).toBe(MAX_RUN_ID_BYTES);
    expect(defaultRunId(long).startsWith('w'.repeat(163) + '-')).toBe(true);
    // 50 crabs are 200 bytes (100 UTF-16 units): a pair is never split.
    const crabs = defaultRunId('🦀'.repeat(50));
    expect(isWellFormedUnicode(crabs)).toBe(true);
    expect(crabs.startsWith('🦀'.repeat(40) + '-')).toBe(true);
    expect(defaultForkRunId('x'.repeat(190))).toMatch(/^x{186}\.fork-[0-9a-f]{8}$/);
    // A name of control characters (legal for a workflow, not in a run id) becomes underscores.
    expect(defaultRunId('a\nb')).toMatch(/^a_b-/);
    // "%" takes 3 bytes in a key: a slash-filled source id is cut to what fits with any node name.
    acceptedAtStartAndFork(defaultForkRunId('/'.repeat(200)));
  });
});

describe('instance ids', () => {
  it('default to a fresh remit-<uuid>', () => {
    expect(defaultInstanceId()).toMatch(/^remit-[0-9a-f-]{36}$/);
    expect(defaultInstanceId()).not.toBe(defaultInstanceId());
  });

  it('are refused with OptionInvalidError when empty, too long or holding control characters', () => {
    for (const bad of ['', 'a'.repeat(201), 'a\nb', 42, null, 'pod-\ud800', 'pod#thread-2', '#']) {
      expect(() => checkInstanceId(bad), String(bad)).toThrow(OptionInvalidError);
    }
    expect(() => checkInstanceId('pod-7/replica é')).not.toThrow();
  });
});
