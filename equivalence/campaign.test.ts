/**
 * The campaign engine (./campaign.ts, ./sampled.ts): histories are a function of (seed, index)
 * only, fast-check replays exactly the history the campaign checked, the sampled check asks nothing
 * the full check would not ask, a bounded campaign passes with every kind of request and cut asked,
 * and the campaign catches and shrinks a canary.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createReferenceCore, reference } from 'remit/core';
import type { RecoveryCore } from 'remit/core';
import { loadWasmCore } from 'remit/core';
import type { LogCase } from './arbitraries.js';
import {
  CampaignRunner, expectedKinds, historyBias, historyProperty, historySeed, shrinkHistory, type CampaignOptions,
} from './campaign.js';
import { CoreComparison, hex } from './compare.js';
import { loadCoresUnderTest, NO_WASM_HELP } from './cores.js';
import { describeDivergence } from './report.js';
import { seedFromEnv } from './property.js';
import { Coverage, DEFAULT_SAMPLED_CHECK, SampledCheck, SamplingRng } from './sampled.js';

const cores = await loadCoresUnderTest();
const options = (seed: number, fullCheckEvery = 16): CampaignOptions => ({ seed, maxSteps: 28, check: DEFAULT_SAMPLED_CHECK, fullCheckEvery });

/** The reference, recording every call as "length" (recover) or "length:request hex" (admit). */
function recordingReference(calls: Set<string>): RecoveryCore {
  return {
    ...reference,
    recoverEncoded: (log) => (calls.add(`${log.length}`), reference.recoverEncoded(log)),
    admitEncoded: (log, request) => (calls.add(`${log.length}:${hex(request)}`), reference.admitEncoded(log, request)),
  };
}

describe('campaign histories', () => {
  it('depend only on (seed, index), not on which histories ran before', () => {
    const forward = new CampaignRunner(reference, createReferenceCore(), options(5));
    const backward = new CampaignRunner(reference, createReferenceCore(), options(5));
    for (let i = 0; i < 40; i++) expect(forward.runHistory(i)).toBeNull();
    for (let i = 39; i >= 0; i--) expect(backward.runHistory(i)).toBeNull();
    expect(new Map(backward.coverage.counts)).toEqual(new Map(forward.coverage.counts));
    expect(backward.comparison.stats).toEqual(forward.comparison.stats);
  });

  it("are fast-check's first value for their seed and bias, so fc.check replays and shrinks them", () => {
    const runner = new CampaignRunner(reference, reference, options(20261130));
    for (const index of [0, 1, 2, 9, 10, 99, 100, 12345]) {
      let seen: LogCase | null = null;
      fc.check(historyProperty(28, historyBias(index), (c) => { seen ??= c; }), { seed: historySeed(20261130, index), numRuns: 1 });
      expect(seen).toEqual(runner.historyCase(index));
    }
  });

  it('ask only what the full check asks (every byte cut), so the shrinker sees the divergence again', () => {
    const runner = new CampaignRunner(reference, reference, options(77));
    for (let i = 0; i < 60; i++) {
      const sampled = new Set<string>();
      const full = new Set<string>();
      const check = new SampledCheck(new CoreComparison(recordingReference(sampled), reference), DEFAULT_SAMPLED_CHECK, new Coverage());
      const everything = new CoreComparison(recordingReference(full), reference);
      const rng = new SamplingRng(i);
      for (const log of runner.historyCase(i).logs) {
        expect(check.run(log, rng)).toBeNull();
        expect(everything.everyPrefix(log, { cuts: 'all' })).toBeNull();
      }
      const extra = [...sampled].filter((call) => !full.has(call));
      expect(extra).toEqual([]);
    }
  });
});

const wasm = await loadWasmCore(undefined, { binding: 'canonical-abi' }).catch((e: unknown) => e as Error);

describe('the bounded campaign', () => {
  it('has the Wasm core (REMIT_ALLOW_NO_WASM=1 skips the Wasm comparison)', () => {
    if (wasm instanceof Error && !cores.allowNoWasm) throw new Error(`${NO_WASM_HELP}\n${wasm.message}`);
  });

  it.skipIf(wasm instanceof Error)('wasm (canonical ABI) ≡ reference on 1500 histories, every kind of request and cut asked', () => {
    const seed = seedFromEnv() ?? 20261130;
    const runner = new CampaignRunner(wasm as RecoveryCore, reference, options(seed));
    for (let i = 0; i < 1500; i++) {
      const found = runner.runHistory(i);
      if (found) throw new Error(`history ${i} of seed ${seed} (${found.source}):\n${describeDivergence(found.divergence)}`);
    }
    const missing = expectedKinds(DEFAULT_SAMPLED_CHECK).filter((k) => runner.coverage.get(k) === 0);
    expect(missing).toEqual([]);
    expect(runner.coverage.get('history: full check')).toBe(Math.ceil(1500 / 16)); // indices 0, 16, ..., 1488
  });
});

describe('the campaign fails on an injected bug', () => {
  it('finds accept-second-claim and shrinks it under fast-check', () => {
    const buggy = createReferenceCore({ canary: 'accept-second-claim' });
    const o = options(3);
    const runner = new CampaignRunner(reference, buggy, o);
    let index = 0;
    let found = runner.runHistory(index);
    while (!found && index < 3000) found = runner.runHistory(++index);
    expect(found).not.toBeNull();
    const shrunk = shrinkHistory(reference, buggy, o, index, found!.divergence, { writeCorpus: false, label: 'canary' });
    expect(shrunk.message).toContain(`replay: npm run fuzz -- --seed 3 --history ${index}`);
    expect(shrunk.message).toMatch(/fast-check: seed -?\d+, bias \d, path "/);
    expect(shrunk.divergence!.log.length).toBeLessThanOrEqual(found!.divergence.log.length);
    expect(shrunk.divergence!.log.length).toBeLessThan(1500);
  });
});
