/**
 * The shell and the campaign call the Wasm core through the canonical-ABI binding (wasm-core.ts,
 * the default); jco's generated binding stays selectable (binding: 'jco'): both must return the
 * same bytes for every log and request. Checked on every corpus
 * entry and fixture (every prefix, every byte cut, every request), on campaign histories, and on
 * logs big enough to grow the instance's memory (which detaches the old buffer).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { encodeLog, encodeRecord } from 'remit/core';
import { reference } from 'remit/core';
import { CoreUnavailableError, loadWasmCore } from 'remit/core';
import { RecordKind, type LogRecord, type RecoveryCore } from 'remit/core';
import { CampaignRunner } from './campaign.js';
import { CoreComparison } from './compare.js';
import { loadCoresUnderTest } from './cores.js';
import { readCorpus } from './corpus.js';
import { FIXTURES_DIR } from './fixtures.js';
import { describeDivergence } from './report.js';
import { DEFAULT_SAMPLED_CHECK } from './sampled.js';

// Fails the suite (instead of skipping it) when the Wasm build is missing, unless REMIT_ALLOW_NO_WASM=1.
const cores = await loadCoresUnderTest();
const direct = await loadWasmCore(undefined, { binding: 'canonical-abi' }).catch((e: unknown) => e as Error);
const viaJco = await loadWasmCore(undefined, { binding: 'jco' }).catch((e: unknown) => e as Error);
const both = cores.wasm !== null && !(viaJco instanceof Error) && !(direct instanceof Error);
const t = (s: string) => new TextEncoder().encode(s);

function expectSame(comparison: CoreComparison, log: Uint8Array, cuts: 'all' | 'none'): void {
  const d = comparison.everyPrefix(log, { cuts });
  if (d) throw new Error(describeDivergence(d));
}

describe('the canonical-ABI binding', () => {
  it('says "run npm run setup" with a typed error when the build is missing', async () => {
    const err = await loadWasmCore(new URL('./no-such-dir/remit_core.js', import.meta.url).href, { binding: 'canonical-abi' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CoreUnavailableError);
    expect(err).toMatchObject({ reason: 'WASM_NOT_BUILT' });
    expect((err as Error).message).toMatch(/npm run setup/);
  });
});

describe.skipIf(cores.wasm === null)('both bindings of the built core', () => {
  it('load (a binding that fails to load fails here, not by skipping the comparisons below)', () => {
    if (direct instanceof Error) throw direct;
    if (viaJco instanceof Error) throw viaJco;
    expect([direct.name, viaJco.name]).toEqual(['wasm', 'wasm']);
  });
});

describe.skipIf(!both)('canonical-ABI binding ≡ jco binding, byte for byte', () => {
  const comparison = () => new CoreComparison(viaJco as RecoveryCore, direct as RecoveryCore);

  it('on every corpus entry and fixture, at every prefix, byte cut and request', () => {
    const c = comparison();
    for (const entry of readCorpus()) expectSame(c, entry.log, 'all');
    const fixtures = readdirSync(FIXTURES_DIR).filter((f) => f.endsWith('.bin'));
    expect(fixtures.length).toBeGreaterThan(0);
    for (const f of fixtures) expectSame(c, Uint8Array.from(readFileSync(`${FIXTURES_DIR}${f}`)), 'all');
  });

  it('on 300 campaign histories (the full check for each)', () => {
    const runner = new CampaignRunner(viaJco as RecoveryCore, direct as RecoveryCore, { seed: 31, maxSteps: 28, check: DEFAULT_SAMPLED_CHECK, fullCheckEvery: 1 });
    for (let i = 0; i < 300; i++) {
      const found = runner.runHistory(i);
      if (found) throw new Error(describeDivergence(found.divergence));
    }
  });

  it('on logs that grow the memory (1 MB and 4 MB states), and on small logs afterwards', () => {
    const c = comparison();
    const started = (stateBytes: number): LogRecord => ({
      kind: RecordKind.RUN_STARTED, seq: 0, runId: t('r'), workflow: t('w'), version: t('1'), fingerprint: t(''), definition: t(''),
      nodes: [{ name: t('a'), kind: 1 }], startNode: t('a'), state: new Uint8Array(stateBytes).fill(0x20),
    });
    for (const size of [1 << 20, 4 << 20]) {
      const log = encodeRecord(started(size));
      expect(c.recover(log)).toBeNull();
      expect(c.admit(log, Uint8Array.of(2, 0, 0, 0, 0))).toBeNull();
      expect(c.recover(log.subarray(0, log.length - 1))).toBeNull();
    }
    expectSame(c, encodeLog([started(3)]), 'all');
    expect((direct as RecoveryCore).recoverEncoded(encodeLog([started(3)]))).toEqual(reference.recoverEncoded(encodeLog([started(3)])));
  });
});
