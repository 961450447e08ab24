import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRemit, END, openMemoryStore, workflow } from 'remit';
import { createCore } from 'remit/core';
import { countingCore, countingStore, newByteCounter, type CallCounter } from './counting.js';
import { decileFigures, flatnessOfFigures, medianRunIndex } from '../suites/step-cost.js';
import { evaluateTargets } from './targets.js';
import type { ResultRow } from './results.js';
import { documentOf } from './test-documents.js';

describe('countingCore', () => {
  it('counts every byte-array argument of every method, also of methods no interface names yet', () => {
    class Handle {
      fed = 0;
      feed(bytes: Uint8Array): number {
        this.fed += bytes.length;
        return this.fed;
      }
    }
    const core = {
      name: 'fake',
      recover: (log: Uint8Array) => ({ ok: true, n: log.length }),
      newMethod: (a: Uint8Array, b: Uint8Array[], n: number) => a.length + b.length + n,
      open(): Handle {
        return new Handle();
      },
      close(h: Handle): number {
        // The core must get its own object back, not the wrapper.
        if (!(h instanceof Handle) || Object.getPrototypeOf(h) !== Handle.prototype) throw new Error('not a handle');
        return h.fed;
      },
      twice(log: Uint8Array): number {
        // A call on its own object is not a second hand-over.
        return this.recover(log).n * 2;
      },
    };
    const counter = newByteCounter();
    const c = countingCore(core, counter);
    expect(c.name).toBe('fake');
    expect(c.recover(new Uint8Array(10))).toEqual({ ok: true, n: 10 });
    expect(c.newMethod(new Uint8Array(3), [new Uint8Array(4), new Uint8Array(5)], 7)).toBe(12);
    expect(counter.bytes).toBe(22);
    const h = c.open();
    expect(h.feed(new Uint8Array(100))).toBe(100);
    expect(counter.bytes).toBe(122);
    expect(c.close(h)).toBe(100);
    expect(c.twice(new Uint8Array(8))).toBe(16);
    expect(counter.bytes).toBe(130);
    expect(counter.calls).toEqual({ recover: 1, newMethod: 1, open: 1, 'handle.feed': 1, close: 1, twice: 1 });
  });

  it('sees what the sequencer hands the real core, and the run is unchanged by the wrapper', async () => {
    const wf = workflow({ name: 'count', version: '1', state: z.object({ i: z.number().int() }) })
      .effect('step', { run: async () => ({ ok: true }), apply: (s) => ({ i: s.i + 1 }), next: (s) => (s.i < 5 ? 'step' : END) })
      .build();
    const core = await createCore('reference');
    const counter = newByteCounter();
    const calls: CallCounter = { calls: {} };
    const store = openMemoryStore();
    const remit = await createRemit({ store: countingStore(store, calls), workflows: [wf], core: countingCore(core, counter) });
    const run = await remit.start(wf, { i: 0 }, { runId: 'r' });
    expect(run.status).toBe('completed');
    expect(run.state).toEqual({ i: 5 });
    const logBytes = (await store.readLog('r')).length;
    // Every step hands the core at least the log so far; five steps hand it more than the log once.
    expect(counter.bytes).toBeGreaterThan(logBytes);
    expect(Object.values(counter.calls).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(5);
    expect(calls.calls['append']).toBeGreaterThanOrEqual(5);
    await remit.close();
  });
});

describe('step-cost deciles', () => {
  const stampsOf = (stepUs: (i: number) => number, n: number) => {
    const s = new Float64Array(n + 1);
    for (let i = 0; i < n; i++) s[i + 1] = s[i]! + stepUs(i) / 1000;
    return s;
  };
  it('reports a flat run as flat and a linearly growing step cost as growing', () => {
    const flat = decileFigures(stampsOf(() => 50, 10_000), 10_000);
    expect(flat.windowSteps).toBe(64);
    for (const d of flat.decileUs) expect(d).toBeCloseTo(50, 6);
    const growing = decileFigures(stampsOf((i) => 10 + i, 10_000), 10_000);
    const ratio = growing.decileUs[9]! / growing.decileUs[0]!;
    // Decile 1 centres near step 500, decile 10 near step 9500.
    expect(ratio).toBeGreaterThan(15);
    expect(ratio).toBeLessThan(20);
  });
});

describe('step-cost: the median of a judged case\'s runs', () => {
  it('picks the middle run by flatness, the worse of two, the only one of one', () => {
    expect(medianRunIndex([2.86, 1.02, 1.1])).toBe(2);
    expect(medianRunIndex([1.1, 1.72, 0.9])).toBe(0);
    expect(medianRunIndex([1.2, 1.9])).toBe(1);
    expect(medianRunIndex([1.9, 1.2])).toBe(0);
    expect(medianRunIndex([3])).toBe(0);
    expect(() => medianRunIndex([])).toThrow(/no runs/);
  });
  it('a growth in every run is still the median (canary: repeating a run does not hide a growing cost)', () => {
    const flatness = [14, 12.5, 13.2];
    expect(flatness[medianRunIndex(flatness)]).toBeGreaterThan(1.5);
  });
  it('a run\'s flatness is the worse of its median and mean readings', () => {
    const f = (d1: number, d10: number, m1: number, m10: number) => ({
      decileUs: [d1, 0, 0, 0, 0, 0, 0, 0, 0, d10], decileMeanUs: [m1, 0, 0, 0, 0, 0, 0, 0, 0, m10],
    });
    expect(flatnessOfFigures(f(100, 110, 100, 180))).toBeCloseTo(1.8, 9);
    expect(flatnessOfFigures(f(100, 200, 100, 120))).toBeCloseTo(2, 9);
  });
});

describe('targets of the scaling suites', () => {
  const doc = (rows: ResultRow[]) => documentOf('step-cost', rows);
  const stepRow = (loop: string, store: string, ratio: number, bytesRatio: number, stopped = 0): ResultRow => ({
    suite: 'step-cost', case: `${loop} ${store} N=10000`, params: { loop, store, steps: 10_000 }, impl: 'remit', role: 'subject', status: 'measured',
    metrics: {
      last_over_first_decile: ratio, last_over_first_decile_mean: ratio, bytes_to_core_over_log: bytesRatio, steps_run: 10_000, stopped_by_budget: stopped,
      step_us_decile_1: 400, step_us_decile_10: 400 * ratio,
    }, ratios: {},
  });
  it('a quadratic run misses (canary), a flat one meets, a run cut by its budget is never met', () => {
    const pairs = [['pure', 'memory'], ['pure', 'sqlite'], ['effect', 'memory'], ['effect', 'sqlite']];
    const flat = evaluateTargets(doc(pairs.map(([l, s]) => stepRow(l!, s!, 1.1, 1.5))));
    expect(flat.find((t) => t.id === 'step-flat-n10000')?.met).toBe(true);
    expect(flat.find((t) => t.id === 'core-bytes-vs-log')?.met).toBe(true);
    expect(flat.find((t) => t.id === 'step-flat-n100000')?.met).toBe(null);
    const quadratic = evaluateTargets(doc(pairs.map(([l, s], i) => stepRow(l!, s!, i === 3 ? 13 : 1.1, i === 3 ? 4991 : 1.5))));
    expect(quadratic.find((t) => t.id === 'step-flat-n10000')).toMatchObject({ met: false, measured: 13 });
    expect(quadratic.find((t) => t.id === 'core-bytes-vs-log')).toMatchObject({ met: false, measured: 4991 });
    const cut = evaluateTargets(doc(pairs.map(([l, s], i) => stepRow(l!, s!, 1.1, 1.5, i === 0 ? 1 : 0))));
    expect(cut.find((t) => t.id === 'step-flat-n10000')?.met).not.toBe(true);
  });
  it('a cost paid in a few windows (a pause every 192 steps in the last decile) is seen by the mean (canary)', () => {
    const stamps = new Float64Array(10_001);
    for (let i = 0; i < 10_000; i++) stamps[i + 1] = stamps[i]! + (30 + (i >= 9_000 && i % 192 === 0 ? 5_000 : 0)) / 1000;
    const f = decileFigures(stamps, 10_000);
    expect(f.decileUs[9]! / f.decileUs[0]!).toBeCloseTo(1, 6);
    expect(f.decileMeanUs[9]! / f.decileMeanUs[0]!).toBeGreaterThan(1.5);
    const pairs = [['pure', 'memory'], ['pure', 'sqlite'], ['effect', 'memory'], ['effect', 'sqlite']];
    const rows = pairs.map(([l, s], i) => ({ ...stepRow(l!, s!, 1, 1.5), metrics: { ...stepRow(l!, s!, 1, 1.5).metrics, last_over_first_decile_mean: i === 2 ? f.decileMeanUs[9]! / f.decileMeanUs[0]! : 1 } }));
    const t = evaluateTargets(doc(rows)).find((x) => x.id === 'step-flat-n10000')!;
    expect(t.met).toBe(false);
    expect(t.note).toMatch(/effect\/memory 1\.00× median \/ [0-9.]+× mean/);
  });
  it('a row of several runs names each run\'s flatness, and core bytes are judged by the most any run handed the core', () => {
    const pairs = [['pure', 'memory'], ['pure', 'sqlite'], ['effect', 'memory'], ['effect', 'sqlite']];
    const rows = pairs.map(([l, s], i) => {
      const r = stepRow(l!, s!, 1.1, 1.5);
      if (i === 3) Object.assign(r.metrics, { runs: 3, flatness_run_1: 1.72, flatness_run_2: 1.1, flatness_run_3: 1.05, bytes_to_core_over_log_max: 2.5 });
      return r;
    });
    const targets = evaluateTargets(doc(rows));
    expect(targets.find((t) => t.id === 'step-flat-n10000')!.note).toMatch(/effect\/sqlite 1\.10× median \/ 1\.10× mean \(median of 3 runs: 1\.72×, 1\.10×, 1\.05×\)/);
    expect(targets.find((t) => t.id === 'core-bytes-vs-log')).toMatchObject({ met: false, measured: 2.5 });
  });
  it('rows without the mean reading (an older document re-rendered) are never met by the median alone', () => {
    const pairs = [['pure', 'memory'], ['pure', 'sqlite'], ['effect', 'memory'], ['effect', 'sqlite']];
    const old = pairs.map(([l, s]) => { const r = stepRow(l!, s!, 1.1, 1.5); delete r.metrics.last_over_first_decile_mean; return r; });
    const t = evaluateTargets(doc(old)).find((x) => x.id === 'step-flat-n10000')!;
    expect(t.met).toBeNull();
    expect(t.note).toMatch(/no mean reading in this document/);
  });
  it('the four loop/store pairs must all have run for step-flat and core-bytes to be met', () => {
    const three = [['pure', 'memory'], ['pure', 'sqlite'], ['effect', 'memory']].map(([l, s]) => stepRow(l!, s!, 1.1, 1.5));
    const targets = evaluateTargets(doc(three));
    expect(targets.find((t) => t.id === 'step-flat-n10000')).toMatchObject({ met: null });
    expect(targets.find((t) => t.id === 'step-flat-n10000')!.note).toMatch(/effect\/sqlite not run/);
    expect(targets.find((t) => t.id === 'core-bytes-vs-log')).toMatchObject({ met: null });
  });
  it('the interrupt loop has its own target and does not count toward the four loops\' ones', () => {
    const pairs = [['pure', 'memory'], ['pure', 'sqlite'], ['effect', 'memory'], ['effect', 'sqlite']];
    const four = pairs.map(([l, s]) => stepRow(l!, s!, 1.1, 1.5));
    const growing = evaluateTargets(doc([...four, stepRow('interrupt', 'memory', 8, 900), stepRow('interrupt', 'sqlite', 1.2, 900)]));
    expect(growing.find((t) => t.id === 'step-flat-n10000')?.met).toBe(true);
    expect(growing.find((t) => t.id === 'core-bytes-vs-log')?.met).toBe(true);
    // Not judged by the core-bytes target, and not hidden: its figure is in the note.
    expect(growing.find((t) => t.id === 'core-bytes-vs-log')!.note).toMatch(/the interrupt loop \(not judged here[^)]*\): memory N=10000 900\.00×, sqlite N=10000 900\.00×/);
    expect(growing.find((t) => t.id === 'interrupt-cycle-flat-n10000')).toMatchObject({ met: false, measured: 8 });
    const flat = evaluateTargets(doc([...four, stepRow('interrupt', 'memory', 1.2, 900), stepRow('interrupt', 'sqlite', 1.3, 900)]));
    expect(flat.find((t) => t.id === 'interrupt-cycle-flat-n10000')).toMatchObject({ met: true, measured: 1.3 });
    const cut = evaluateTargets(doc([...four, stepRow('interrupt', 'memory', 1.2, 900, 1), stepRow('interrupt', 'sqlite', 1.3, 900)]));
    expect(cut.find((t) => t.id === 'interrupt-cycle-flat-n10000')?.met).toBe(null);
    const none = evaluateTargets(doc(four));
    expect(none.find((t) => t.id === 'interrupt-cycle-flat-n10000')?.met).toBe(null);
  });
});
