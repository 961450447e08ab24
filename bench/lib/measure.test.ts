import { describe, expect, it } from 'vitest';
import { compareTasks, warmUpNote, type TimedOutcome } from './measure.js';

describe('compareTasks warm-up', () => {
  it('warms every task the given number of calls, alternating, before the timed rounds, and returns those calls', async () => {
    const calls: string[] = [];
    const prepared: string[] = [];
    const outcomes = await compareTasks('order', [
      { impl: 'a', fn: () => { calls.push('a'); return { overriddenDuration: calls.length }; }, beforeEach: () => prepared.push('a') },
      { impl: 'b', async: true, fn: async () => { calls.push('b'); return { overriddenDuration: 100 + calls.length }; } },
    ], { iterations: 1, timeMs: 0, warmupIterations: 3, rounds: 2 });
    // Three alternating warm-up pairs, then one timed call of each per round.
    expect(calls.slice(0, 6)).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    expect(calls).toHaveLength(10);
    expect(prepared.filter((p) => p === 'a').length).toBeGreaterThanOrEqual(5);
    const [a, b] = outcomes;
    // A task's own overriddenDuration is what the warm-up records, as the samples do.
    expect(a!.warmup_ms).toEqual([1, 3, 5]);
    expect(b!.warmup_ms).toEqual([102, 104, 106]);
    expect(a!.time_ms!.samples).toBe(2);
    expect(b!.time_ms!.samples).toBe(2);
  });

  it('reports a task that throws in the warm-up as an error and still measures the others', async () => {
    let n = 0;
    const outcomes = await compareTasks('throws', [
      { impl: 'bad', fn: () => { if (++n === 2) throw new Error('second call fails'); return n; } },
      { impl: 'good', fn: () => 1 },
    ], { iterations: 1, timeMs: 0, warmupIterations: 3, rounds: 2 });
    expect(outcomes[0]).toMatchObject({ impl: 'bad', error: 'second call fails' });
    expect(outcomes[0]!.time_ms).toBeUndefined();
    expect(outcomes[0]!.warmup_ms).toHaveLength(1);
    expect(outcomes[1]!.warmup_ms).toHaveLength(3);
    expect(outcomes[1]!.time_ms!.samples).toBe(2);
  });

  it('warms nothing when asked for no warm-up', async () => {
    const outcomes = await compareTasks('none', [{ impl: 'a', fn: () => 1 }], { iterations: 1, timeMs: 0, warmupIterations: 0, rounds: 1 });
    expect(outcomes[0]!.warmup_ms).toEqual([]);
  });
});

describe('warmUpNote', () => {
  const summary = (median: number) => ({ samples: 3, median, p25: median, p75: median, min: median, max: median, mad: 0 });
  it('gives each measured task the medians of its first and last tenth of warm-up calls beside its samples, per operation', () => {
    const falling: TimedOutcome = { impl: 'remit', warmup_ms: [9, 8, 7, 6, 5, 4, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2], time_ms: summary(1) };
    const flat: TimedOutcome = { impl: 'raw', warmup_ms: [2], time_ms: summary(2) };
    const failed: TimedOutcome = { impl: 'broken', warmup_ms: [5], error: 'x' };
    const note = warmUpNote('k=8', [falling, flat, failed], 100, 'claim');
    // 20 calls: tenths of 2 calls; first [9, 8] -> 8.5 ms, last [1, 2] -> 1.5 ms; per claim /100, in us.
    expect(note).toBe('Warm-up, k=8, per claim: remit 85.00 us over its first 2 warm-up calls, 15.00 us over its last, 10.00 us in the samples; '
      + 'raw 20.00 us over its first warm-up call, 20.00 us over its last, 20.00 us in the samples.');
    expect(warmUpNote('k=1', [failed], 1, 'step')).toBe('Warm-up, k=1, per step: none.');
  });
});
