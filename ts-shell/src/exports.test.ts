/**
 * Every error class docs/errors.md names is exported by the package entry (`remit`, src/index.ts),
 * and every error class the entry exports is named there: the two cannot drift apart.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as remit from './index.js';

const ERRORS_DOC = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const CORE_API_DOC = readFileSync(new URL('../../docs/core-api.md', import.meta.url), 'utf8');

/** The class names docs/errors.md writes in backticks: `SomethingError`, `InvariantViolation`, `TerminalFailure`. */
function documentedClasses(): string[] {
  return [...new Set([...ERRORS_DOC.matchAll(/`([A-Z][A-Za-z]*(?:Error|Violation|Failure))`/g)].map((m) => m[1]!))].sort();
}

/** The classes the entry exports that are errors. */
function exportedErrorClasses(): string[] {
  return Object.entries(remit)
    .filter(([, value]) => typeof value === 'function' && value.prototype instanceof Error)
    .map(([name]) => name)
    .sort();
}

describe('the error classes of docs/errors.md', () => {
  it('are found in it (the table and the text)', () => {
    expect(documentedClasses()).toEqual(expect.arrayContaining(['RemitError', 'InvariantViolation', 'TerminalFailure', 'DefinitionInvalidError', 'OptionInvalidError']));
    expect(documentedClasses().length).toBeGreaterThan(30);
  });

  it('are each exported by the package entry, as an Error class', () => {
    const exported = remit as unknown as Record<string, unknown>;
    const missing = documentedClasses().filter((name) => !(typeof exported[name] === 'function' && (exported[name] as { prototype: unknown }).prototype instanceof Error));
    expect(missing).toEqual([]);
  });

  it('are all the error classes the entry exports', () => {
    expect(exportedErrorClasses().filter((name) => !documentedClasses().includes(name))).toEqual([]);
  });

  it('InvariantViolation is the class REMIT throws for a broken invariant ("REMIT bug")', async () => {
    const { assert } = await import('./assert.js');
    expect(() => assert(false, 'x')).toThrow(remit.InvariantViolation);
    expect(() => assert(false, 'x')).toThrow(/^REMIT bug/);
  });
});

describe('the error classes remit/core exports', () => {
  it('are each named in docs/core-api.md or docs/errors.md, where a user of the entry looks up what it throws', async () => {
    const core = (await import('./core/index.js')) as unknown as Record<string, unknown>;
    const classes = Object.entries(core)
      .filter(([, value]) => typeof value === 'function' && (value as { prototype: unknown }).prototype instanceof Error)
      .map(([name]) => name);
    expect(classes).toEqual(expect.arrayContaining(['CoreTrapError', 'EncodingError']));
    const named = (name: string) => CORE_API_DOC.includes(`\`${name}\``) || ERRORS_DOC.includes(`\`${name}\``) || ERRORS_DOC.includes(` ${name} `);
    expect(classes.filter((name) => !named(name))).toEqual([]);
  });
});
