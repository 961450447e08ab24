/** Every corpus log, replayed on both cores at every prefix, byte cut and request. */
import { describe, expect, it } from 'vitest';
import { CoreComparison } from './compare.js';
import { loadCoresUnderTest } from './cores.js';
import { readCorpus } from './corpus.js';
import { describeDivergence } from './report.js';

const cores = await loadCoresUnderTest();
const corpus = readCorpus();

describe('corpus', () => {
  it('is not empty', () => {
    expect(corpus.length).toBeGreaterThan(0);
  });
  it('every entry: the reference core is total on it', () => {
    for (const e of corpus) {
      cores.reference.recoverEncoded(e.log);
      cores.reference.admitEncoded(e.log, Uint8Array.of(1, 1, 0, 0, 0, 0x61));
    }
  });
  describe.skipIf(cores.wasm === null)('wasm ≡ reference on every entry', () => {
    it.each(corpus.map((e) => [e.name, e] as const))('%s', (_name, entry) => {
      const d = new CoreComparison(cores.wasm!, cores.reference).everyPrefix(entry.log, { cuts: 'all' });
      if (d) throw new Error(`${entry.note.note}\n${describeDivergence(d)}`);
    });
  });
});
