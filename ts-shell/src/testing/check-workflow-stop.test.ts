/**
 * What checkWorkflow stops, and where a crash can fall: a run given up after stallLimitMs stops at
 * its next fault point (no handler call after the check returned), every sequencer of the check
 * appends each step on its own (a closure cache between two pure steps is caught), a route that
 * samples is caught by the re-asks, and the problems and unchecked comparisons name what they can.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, workflow } from '../workflow/workflow.js';
import { checkWorkflow } from './check-workflow.js';
import { MemoryEffectSink } from './effect-sink.js';
import { fail } from '../errors.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a run given up after stallLimitMs', () => {
  it('calls no handler after checkWorkflow returned (its call in flight finishes; the retry that would follow is not made)', async () => {
    const sink = new MemoryEffectSink();
    let calls = 0;
    const wf = workflow({ name: 'slow-then-fast', version: '1', state: z.object({ r: z.string().optional() }) })
      .effect('e', {
        run: async (_s, { idempotencyKey }) => {
          calls += 1;
          // The first call hangs past the stall limit and then fails, as a timeout upstream does.
          if (calls === 1) {
            await sleep(400);
            throw new Error('ETIMEDOUT');
          }
          return { id: (await sink.apply('e', idempotencyKey, {})).receiptId };
        },
        apply: (_s, r) => ({ r: r.id }),
        next: END,
      })
      .build();
    const report = await checkWorkflow(wf, { input: {}, stallLimitMs: 150, core: 'reference' });
    expect(report.problems.map((p) => p.property)).toEqual(['liveness']);
    expect(report.problems[0]!.message).toContain('stallLimitMs');
    const callsAtReturn = calls;
    await sleep(900);
    expect(calls).toBe(callsAtReturn);
    expect((await sink.counts()).byEffect).toEqual({});
  });
});

describe('every sequencer of a check appends each step on its own', () => {
  const Cart = z.object({ sku: z.string(), qty: z.number(), total: z.number().optional(), seen: z.boolean().optional() });
  const createCart = () => {
    // A cache one pure node fills and the next reads instead of the state: empty after a restart.
    const cache = new Map<string, number>();
    return workflow({ name: 'cart', version: '1', state: Cart })
      .pure('price', { run: (s) => { cache.set(s.sku, s.sku === 'book' ? 1200 : 500); return { seen: true }; }, next: 'total' })
      .pure('total', { run: (s) => ({ total: (cache.get(s.sku) ?? 0) * s.qty }), next: END })
      .build();
  };

  it('a closure cache handed from one pure node to the next is caught at the boundary between them (group commit would hide it)', async () => {
    const report = await checkWorkflow(createCart, { input: { sku: 'book', qty: 2 }, core: 'reference' });
    expect(report.reference.state).toMatchObject({ total: 2400 });
    expect(report.problems.length).toBeGreaterThan(0);
    expect(report.problems.every((p) => p.property === 'recovered-run' && p.node === 'total')).toBe(true);
    expect(report.problems.map((p) => p.fault)).toContain('append.after@price');
  });

  it('the same workflow reading the state is clean', async () => {
    const wf = workflow({ name: 'cart-state', version: '1', state: Cart.extend({ price: z.number().optional() }) })
      .pure('price', { run: (s) => ({ price: s.sku === 'book' ? 1200 : 500 }), next: 'total' })
      .pure('total', { run: (s) => ({ total: s.price! * s.qty }), next: END })
      .build();
    expect((await checkWorkflow(wf, { input: { sku: 'book', qty: 2 }, core: 'reference' })).problems).toEqual([]);
  });
});

describe('a route that samples one answer in ten', () => {
  /** A seeded generator (mulberry32), so that the test is the same at every run. */
  function seeded(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  it('is reported in each of 40 checks, naming it (with 16 re-asks, 4 of these 40 passed)', async () => {
    const Ship = z.object({ items: z.number(), audited: z.boolean().optional() });
    let missed = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const random = seeded(seed);
      const wf = workflow({ name: 'audit-random', version: '1', state: Ship })
        .pure('pack', { run: (s) => ({ items: s.items + 1 }), next: () => (random() < 0.1 ? 'audit' : 'ship') })
        .pure('audit', { run: () => ({ audited: true }), next: 'ship' })
        .pure('ship', { run: () => ({}), next: END })
        .build();
      const report = await checkWorkflow(wf, { input: { items: 0 }, core: 'reference', maxScenarios: 1 });
      // Reported as determinism (the re-asks, or the two fault-free runs), or as a recovered run
      // whose route chose differently: each names the route's node.
      if (!report.problems.some((p) => (p.property === 'determinism' || p.property === 'recovered-run') && p.node === 'pack')) missed += 1;
    }
    expect(missed).toBe(0);
  });
});

describe('what the report names', () => {
  it('a resume function that throws: the liveness problem names its interrupt node', async () => {
    let calls = 0;
    const wf = workflow({ name: 'ask-twice', version: '1', state: z.object({ ok: z.boolean().optional() }) })
      .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: END })
      .build();
    const report = await checkWorkflow(wf, {
      input: {},
      core: 'reference',
      resume: { approve: () => { if (++calls === 2) throw new Error('the approver service is down'); return { ok: true }; } },
    });
    const liveness = report.problems.find((p) => p.property === 'liveness');
    expect(liveness).toMatchObject({ node: 'approve', message: expect.stringContaining('the approver service is down') });
  });

  it('a pure node whose fail() code changes from run to run: unchecked says the failures were not compared', async () => {
    let calls = 0;
    const wf = workflow({ name: 'fail-codes', version: '1', state: z.object({ n: z.number() }) })
      .pure('a', { run: (s) => ({ n: s.n + 1 }), next: 'b' })
      .pure('b', { run: () => fail(++calls % 2 === 0 ? 'PAYMENT_DECLINED' : 'OUT_OF_STOCK', 'no'), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.reference.status).toBe('failed');
    expect(report.unchecked).toContainEqual(expect.stringContaining('the failures at b were not compared'));
  });
});
