/**
 * The suite must be able to fail: the reference with one injected bug (a test-only canary) is
 * compared with the clean reference, and the property must find a counterexample. Seeds are fixed
 * so the canary result is deterministic.
 */
import { describe, expect, it } from 'vitest';
import { createReferenceCore, reference, type ReferenceCanary } from 'remit/core';
import { modelLogArb, mutatedLogArb } from './arbitraries.js';
import { runEquivalence } from './property.js';

const canaries: ReferenceCanary[] = ['accept-second-claim', 'snapshot-on-delta'];

describe('canaries: the equivalence property fails on an injected bug', () => {
  it.each(canaries)('catches %s in model histories', (canary) => {
    const buggy = createReferenceCore({ canary });
    const result = runEquivalence(reference, buggy, modelLogArb(28), {
      numRuns: 300, seed: 20240601, compare: { cuts: 'none' }, writeCorpus: false, label: `canary ${canary}`,
    });
    expect(result.details.failed).toBe(true);
    expect(result.divergence).not.toBeNull();
    // The shrunk counterexample is small: the bug is visible within a handful of records.
    expect(result.divergence!.log.length).toBeLessThan(1500);
  });

  it('catches accept-second-claim in mutated logs too (a duplicated claim record)', () => {
    const buggy = createReferenceCore({ canary: 'accept-second-claim' });
    const result = runEquivalence(reference, buggy, mutatedLogArb(20), {
      numRuns: 400, seed: 7, compare: { cuts: 'none' }, writeCorpus: false, label: 'canary in mutations',
    });
    expect(result.details.failed).toBe(true);
  });

  // The fence and the chain only matter on logs a correct shell never writes: damaged ones. (The
  // enumerator finds both within 8 records too: enumerate.test.ts.)
  it.each(['done-without-attempt', 'link-unchecked'] as const)('catches %s in mutated logs', (canary) => {
    const buggy = createReferenceCore({ canary });
    const result = runEquivalence(reference, buggy, mutatedLogArb(20), {
      numRuns: 3000, seed: 11, compare: { cuts: 'none' }, writeCorpus: false, label: `canary ${canary} in mutations`,
    });
    expect(result.details.failed).toBe(true);
  });

  it('the clean reference agrees with itself on the same runs (the failure is the bug, not noise)', () => {
    const result = runEquivalence(reference, createReferenceCore(), modelLogArb(28), {
      numRuns: 100, seed: 20240601, compare: { cuts: 'none' }, writeCorpus: false, label: 'reference vs reference',
    });
    expect(result.details.failed).toBe(false);
  });
});
