/**
 * checkWorkflow under review as its users meet it: realistic workflows with the subtle bugs users
 * write, each of which must be reported with the right property and a message that names the node
 * and says what to change, and correct workflows of the same shapes, which must get no problem.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, workflow } from '../workflow/workflow.js';
import { fail } from '../errors.js';
import { checkWorkflow } from './check-workflow.js';

const Order = z.object({ orderId: z.string(), receipts: z.array(z.string()), queue: z.array(z.string()), shipped: z.number(), note: z.string().optional() });
const input = { orderId: 'o-1', receipts: [], queue: ['a', 'b'], shipped: 0 };

describe('node code that changes the state it was given instead of returning the change (lost-update)', () => {
  it('an apply that pushes onto the state and returns nothing: reported, naming the node and the field, with the fix (it passed: every run lost the receipt alike)', async () => {
    const wf = workflow({ name: 'receipts', version: '1', state: Order })
      .effect('charge', { run: (_s, { idempotencyKey }) => ({ receipt: `r-${idempotencyKey}` }), apply: (s, r) => { (s.receipts as string[]).push(r.receipt); }, next: END })
      .build();
    const report = await checkWorkflow(wf, { input, core: 'reference' });
    expect(report.reference.state).toMatchObject({ receipts: [] });
    expect(report.problems).toEqual([{ property: 'lost-update', node: 'charge', message: expect.stringMatching(/^the apply of charge changed field "receipts" of the state it was given and did not return it: the change is lost .*return the changed fields \(\{ "receipts": \.\.\. \}\)/) }]);
  });

  it('a pure node that shifts a queue in place: the liveness problem of the loop that never ends, and the lost update that explains it', async () => {
    const wf = workflow({ name: 'drain', version: '1', state: Order })
      .pure('take', { run: (s) => ({ note: (s.queue as string[]).shift() }), next: (s) => (s.queue.length > 0 ? 'take' : END) })
      .build();
    const report = await checkWorkflow(wf, { input, core: 'reference', maxSteps: 40 });
    expect(report.problems.map((p) => [p.property, p.node])).toEqual([['liveness', 'take'], ['lost-update', 'take']]);
    expect(report.problems[1]!.message).toMatch(/^pure node take changed field "queue"/);
  });

  it('an async pure node that changes its state after an await, a handler that notes its answer in the state, a route that counts in it: each named', async () => {
    const wf = workflow({ name: 'notes', version: '1', state: Order })
      .pure('load', { run: async (s) => { await Promise.resolve(); (s as { shipped: number }).shipped = 1; return { note: 'loaded' }; }, next: 'ship' })
      .effect('ship', { run: (s) => { (s as { note?: string }).note = 'shipped'; return { ok: true }; }, next: 'done' })
      .pure('done', { run: () => ({}), next: (s) => { (s as { shipped: number }).shipped += 1; return END; } })
      .build();
    const report = await checkWorkflow(wf, { input, core: 'reference' });
    expect(report.problems).toEqual([
      { property: 'lost-update', node: 'load', message: expect.stringMatching(/^pure node load changed field "shipped" of the state it was given/) },
      { property: 'lost-update', node: 'ship', message: expect.stringMatching(/^the handler of effect ship changed field "note" of the state it was given/) },
      { property: 'lost-update', node: 'done', message: expect.stringMatching(/^the route out of done changed field "shipped" of the state it was given/) },
    ]);
    expect(report.problems[1]!.message).toMatch(/return what it learnt in its result and set the fields in apply$/);
  });

  it('correct code of the same shapes gets no problem: a change made in place and returned, a sort of a copy, the whole state returned, a field cleared by returning undefined', async () => {
    const wf = workflow({ name: 'tidy', version: '1', state: Order })
      .pure('add', { run: (s) => { (s.receipts as string[]).push('r-0'); return { receipts: s.receipts }; }, next: 'sort' })
      .pure('sort', { run: (s) => ({ queue: [...s.queue].sort().reverse() }), next: 'all' })
      .pure('all', { run: (s) => ({ ...s, shipped: s.shipped + 1, note: 'x' }), next: 'clear' })
      .interrupt('clear', { resume: z.object({ ok: z.boolean() }), apply: (s) => { const out = { ...s, note: undefined }; delete out.note; return { note: undefined }; }, next: END })
      .build();
    const report = await checkWorkflow(wf, { input, resume: { clear: { ok: true } }, core: 'reference' });
    expect(report.problems).toEqual([]);
    expect(report.reference.state).toEqual({ orderId: 'o-1', receipts: ['r-0'], queue: ['b', 'a'], shipped: 1 });
  });
});

describe('a handler that refuses a key it has seen (a unique-key insert)', () => {
  const Row = z.object({ n: z.number(), rowId: z.string().optional() });
  /** A table with a unique key: insert throws on a key it holds, as a database does. */
  const table = () => {
    const rows = new Map<string, number>();
    return {
      insert(id: string, n: number): string {
        if (rows.has(id)) throw new Error(`duplicate key value violates unique constraint "rows_pkey" (${id})`);
        rows.set(id, n);
        return id;
      },
      upsert(id: string, n: number): string {
        if (!rows.has(id)) rows.set(id, n);
        return id;
      },
    };
  };

  it('its liveness problem says the key was answered before and what the handler must do (it named only the error)', async () => {
    const db = table();
    const wf = workflow({ name: 'save-row', version: '1', state: Row })
      .effect('save', { run: (s, { idempotencyKey }) => ({ rowId: db.insert(idempotencyKey, s.n) }), apply: (_s, r) => ({ rowId: r.rowId }), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 1 }, core: 'reference' });
    const liveness = report.problems.filter((p) => p.property === 'liveness');
    expect(liveness.length).toBeGreaterThan(1);
    for (const p of liveness) {
      expect(p.node).toBe('save');
      expect(p.message).toMatch(/the handler of save threw for key checked-run\/save\/1, which it had returned for before.*must answer as it did the first time; treat the outside system's "already done" or "duplicate" answer for the key as success/);
    }
  });

  it('a handler that always throws gets no such hint (it never answered); the same table used idempotently gets no problem', async () => {
    const broken = workflow({ name: 'always-down', version: '1', state: Row })
      .effect('save', { run: () => { throw new Error('ECONNREFUSED'); }, next: END })
      .build();
    const down = await checkWorkflow(broken, { input: { n: 1 }, core: 'reference' });
    expect(down.problems).toEqual([{ property: 'liveness', node: 'save', message: expect.not.stringMatching(/returned for before/) }]);
    const db = table();
    const wf = workflow({ name: 'upsert-row', version: '1', state: Row })
      .effect('save', { run: (s, { idempotencyKey }) => ({ rowId: db.upsert(idempotencyKey, s.n) }), apply: (_s, r) => ({ rowId: r.rowId }), next: END })
      .build();
    expect((await checkWorkflow(wf, { input: { n: 1 }, core: 'reference' })).problems).toEqual([]);
  });
});

describe('options a user gets wrong', () => {
  it('resume as a Map by node name: OptionInvalidError before anything runs, saying to give an object (it ran, and threw MissingResumeValueError at the first interrupt, saying resume had no value for it)', async () => {
    const wf = workflow({ name: 'approve-map', version: '1', state: z.object({ ok: z.boolean() }) })
      .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: END })
      .build();
    const resume = new Map([['approve', { ok: true }]]) as unknown as { approve: { ok: boolean } };
    await expect(checkWorkflow(wf, { input: { ok: false }, resume, core: 'reference' })).rejects.toMatchObject({
      name: 'OptionInvalidError',
      message: expect.stringMatching(/option resume must be an object of resume values by interrupt node name.*not a Map \(Object\.fromEntries\(map\) makes one\)/),
    });
  });
});

describe('a handler that ignores its idempotency key', () => {
  it('against a fake that does not deduplicate: report.unchecked names the effect whose handler never read its key, first (nothing said so: its calls stay within the bound the check counts)', async () => {
    const charges: number[] = [];
    const payments = { charge: (amount: number) => { charges.push(amount); return { ok: true }; } };
    const receipts = { send: (key: string) => ({ receipt: `m-${key}` }) };
    const wf = workflow({ name: 'pay-no-key', version: '1', state: z.object({ amount: z.number(), receipt: z.string().optional() }) })
      .effect('charge', { run: (s) => payments.charge(s.amount), next: 'mail' })
      .effect('mail', { run: (_s, ctx) => receipts.send(ctx.idempotencyKey), apply: (_s, r) => ({ receipt: r.receipt }), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { amount: 1250 }, core: 'reference' });
    expect(report.problems).toEqual([]);
    expect(report.unchecked[0]).toBe(
      'effect charge: its handler never read its idempotencyKey, so whether the outside system applies a repeated call once was not checked ' +
        '(the check counts handler calls; after a crash inside a call the handler is called again): if it changes an outside system, pass it the key',
    );
    expect(report.unchecked.filter((u) => u.includes('never read'))).toHaveLength(1);
    // The fake applied the crashed calls again: more charges than runs of the check.
    expect(charges.length).toBeGreaterThan(report.faults.length + 2);
  });

  it('a handler that reads the key by destructuring, or passes the whole context on: no such note', async () => {
    const seen = new Set<string>();
    const client = { send: (ctx: { idempotencyKey: string }) => (seen.add(ctx.idempotencyKey), { ok: true }) };
    const wf = workflow({ name: 'pay-key', version: '1', state: z.object({ n: z.number() }) })
      .effect('a', { run: (_s, { idempotencyKey }) => ({ id: idempotencyKey }), next: 'b' })
      .effect('b', { run: (_s, ctx) => client.send(ctx), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report).toMatchObject({ problems: [], unchecked: [] });
  });
});

describe('a resume schema whose default reads a clock', () => {
  const wf = workflow({ name: 'approval-time', version: '1', state: z.object({ approvedAt: z.string().optional() }) })
    .interrupt('approve', { resume: z.object({ by: z.string(), at: z.string().default(() => new Date(Date.now()).toISOString()) }), apply: (_s, v) => ({ approvedAt: v.at }), next: 'done' })
    .pure('done', { run: () => ({}), next: END })
    .build();

  it('the same value given in every run: unchecked says the resume schema made them differ (it blamed "a resume function of the interrupt id or of the state", though none was given)', async () => {
    let report = await checkWorkflow(wf, { input: {}, resume: { approve: { by: 'kim' } }, core: 'reference' });
    // Two runs a millisecond apart: tried until the clock moved between them (a fast machine may read one millisecond twice).
    for (let i = 0; i < 20 && report.unchecked.length === 0; i++) report = await checkWorkflow(wf, { input: {}, resume: { approve: { by: 'kim' } }, core: 'reference' });
    expect(report.problems).toEqual([]);
    expect(report.unchecked.length).toBeGreaterThan(0);
    for (const line of report.unchecked) {
      expect(line).toMatch(/interrupt approve was given the same value in both runs \(\{"by":"kim"\}\), recorded as .*: its resume schema is not deterministic \(a default or a transform reading a clock or Math\.random\)/);
    }
  });

  it('a resume value its schema takes apart from a cycle it strips: no crash of the check; the cyclic field the schema names nowhere is refused as a dropped field, unless the schema drops unknown fields on purpose', async () => {
    const given: { by: string; self?: unknown } = { by: 'kim' };
    given.self = given;
    await expect(checkWorkflow(wf, { input: {}, resume: { approve: given as { by: string } }, core: 'reference' }))
      .rejects.toMatchObject({ code: 'REMIT_RESUME_VALUE_INVALID', node: 'approve', field: 'self' });
    const stripping = workflow({ name: 'approval-strip', version: '1', state: z.object({ approvedAt: z.string().optional() }) })
      .interrupt('approve', { resume: z.object({ by: z.string() }).strip(), apply: (_s, v) => ({ approvedAt: v.by }), next: END })
      .build();
    const report = await checkWorkflow(stripping, { input: {}, resume: { approve: given as { by: string } }, core: 'reference' });
    expect(report.problems).toEqual([]);
  });
});

describe('a run that fails at the node the other run completed', () => {
  const Post = z.object({ id: z.string().optional(), n: z.number() });

  it('a handler that calls fail() for a key it has seen (an API\'s 409): determinism naming that effect and the fix (it blamed the route out of the node before it)', async () => {
    const seen = new Set<string>();
    const api = { post: (key: string) => (seen.has(key) ? { status: 409 } : (seen.add(key), { status: 201, id: `p-${key}` })) };
    const wf = workflow({ name: 'post-409', version: '1', state: Post })
      .pure('prepare', { run: (s) => ({ n: s.n + 1 }), next: 'post' })
      .effect('post', {
        run: (_s, { idempotencyKey }) => {
          const answer = api.post(idempotencyKey);
          if (answer.status === 409) fail('DUPLICATE', 'already posted');
          return { id: answer.id! };
        },
        apply: (_s, r) => ({ id: r.id }),
        next: END,
      })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference' });
    expect(report.problems).toEqual([{
      property: 'determinism',
      node: 'post',
      message: 'two fault-free runs from the same input differ: the second fault-free run failed at post (DUPLICATE: already posted), which the first fault-free run completed, at step 1: ' +
        'its handler failed for key checked-run/post/2, for which it returned {"id":"p-checked-run/post/2"} in the first fault-free run: a handler must answer a key it has seen as it did the first time ' +
        '(after a crash inside its call it is called again with the same key; treat the outside system\'s "already done" or "duplicate" answer for the key as success and return the first result)',
    }]);
  });

  it('an apply that fails in one run only, on the same result: the apply is named as not deterministic', async () => {
    let calls = 0;
    const wf = workflow({ name: 'apply-once', version: '1', state: Post })
      .effect('post', { run: () => ({ id: 'p-1' }), apply: (_s, r) => { if (++calls === 2) fail('FLIP', 'second call'); return { id: r.id }; }, next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference', maxScenarios: 1 });
    expect(report.problems[0]).toEqual({
      property: 'determinism',
      node: 'post',
      message: 'two fault-free runs from the same input differ: the second fault-free run failed at post (FLIP: second call), which the first fault-free run completed, at step 0: its apply failed on the same result, {"id":"p-1"}: the apply is not deterministic',
    });
  });
});

describe('a route that samples (one answer in n), asked again after the runs', () => {
  const Ship = z.object({ items: z.number(), audited: z.boolean().optional() });

  it('a route that audits one call in seven, which the few runs of the check never reach: determinism naming the route (it passed)', async () => {
    // A counter stands for Math.random() < 1 / 7: the runs ask it at most six times.
    let calls = 0;
    const wf = workflow({ name: 'audit-sample', version: '1', state: Ship })
      .pure('pack', { run: (s) => ({ items: s.items + 1 }), next: () => (++calls % 7 === 0 ? 'audit' : 'ship') })
      .pure('audit', { run: () => ({ audited: true }), next: 'ship' })
      .pure('ship', { run: () => ({}), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { items: 0 }, core: 'reference', maxScenarios: 1 });
    expect(report.reference.path).toEqual(['pack', 'ship']);
    expect(report.problems).toEqual([{
      property: 'determinism',
      node: 'pack',
      message: 'the route out of pack answered "ship" for a state, and "audit" when asked again about the same state after the runs: ' +
        'a route must be a function of the state alone (not of Math.random, a clock, a counter or a variable outside the state); its answer is recorded, but a crash before the record asks it again',
    }]);
  });

  it('routes that read the state alone, a static route and END: no problem', async () => {
    const wf = workflow({ name: 'audit-rule', version: '1', state: Ship })
      .pure('pack', { run: (s) => ({ items: s.items + 1 }), next: (s) => (s.items % 7 === 0 ? 'audit' : 'ship') })
      .pure('audit', { run: () => ({ audited: true }), next: 'ship' })
      .pure('ship', { run: () => ({}), next: (s) => (s.items > 100 ? 'pack' : END) })
      .build();
    for (const items of [0, 6]) expect((await checkWorkflow(wf, { input: { items }, core: 'reference' })).problems).toEqual([]);
  });
});

describe('the watch of node code never changes what node code does', () => {
  it('a pure node that leaves a getter that throws on its state and returns an update whose keys cannot be listed: the run goes as without the watch', async () => {
    const hostile = new Proxy({ n: 1 }, { getOwnPropertyDescriptor: () => { throw new Error('no descriptors'); } });
    const wf = workflow({ name: 'hostile', version: '1', state: z.object({ n: z.number() }) })
      .pure('a', { run: (s) => { Object.defineProperty(s, 'n', { get: () => { throw new Error('read me not'); } }); return { n: 2 }; }, next: 'b' })
      .pure('b', { run: () => hostile, next: END })
      .build();
    const report = await checkWorkflow(wf, { input: { n: 0 }, core: 'reference', maxScenarios: 2 });
    const plain = workflow({ name: 'plain', version: '1', state: z.object({ n: z.number() }) })
      .pure('a', { run: () => ({ n: 2 }), next: 'b' })
      .pure('b', { run: () => hostile, next: END })
      .build();
    const without = await checkWorkflow(plain, { input: { n: 0 }, core: 'reference', maxScenarios: 2 });
    expect(report.reference).toEqual(without.reference);
    expect(report.problems.map((p) => p.property)).toEqual(without.problems.map((p) => p.property));
  });
});

describe('the watch of a handler\'s context', () => {
  it('a handler that clones its context (structuredClone, as a logger or a worker\'s postMessage does) works as without the check: no problem (a Proxy was refused)', async () => {
    const logged: unknown[] = [];
    const wf = workflow({ name: 'clone-ctx', version: '1', state: z.object({ id: z.string().optional() }) })
      .effect('call', { run: (_s, ctx) => { const copy = structuredClone(ctx); logged.push(copy); return { id: copy.idempotencyKey }; }, apply: (_s, r) => ({ id: r.id }), next: END })
      .build();
    const report = await checkWorkflow(wf, { input: {}, core: 'reference' });
    expect(report).toMatchObject({ problems: [], unchecked: [], reference: { status: 'completed', state: { id: 'checked-run/call/1' } } });
    expect(logged[0]).toEqual({ runId: 'checked-run', node: 'call', idempotencyKey: 'checked-run/call/1', attempt: 1 });
  });
});

describe('a workflow factory: each sequencer (a process) gets the workflow built anew', () => {
  const Cart = z.object({ sku: z.string(), qty: z.number(), total: z.number().optional() });
  /** A price service double shared by every process, as the real service is. */
  const prices = { get: (sku: string) => (sku === 'book' ? 1200 : 500) };
  /** The bug: the price is kept in a cache of the process, not in the state, and read by a later node. */
  const createCart = () => {
    const cache = new Map<string, number>();
    return workflow({ name: 'cart', version: '1', state: Cart })
      .effect('price', { run: (s) => { cache.set(s.sku, prices.get(s.sku)); return { ok: true }; }, next: 'total' })
      .pure('total', { run: (s) => ({ total: (cache.get(s.sku) ?? 0) * s.qty }), next: END })
      .build();
  };

  it('a state derived from a cache the recovering process does not have: recovered-run naming the node that read it (a workflow object shares the crashed run\'s cache, and passed)', async () => {
    const shared = await checkWorkflow(createCart(), { input: { sku: 'book', qty: 2 }, core: 'reference' });
    expect(shared.problems).toEqual([]);
    const report = await checkWorkflow(createCart, { input: { sku: 'book', qty: 2 }, core: 'reference' });
    expect(report.reference.state).toEqual({ sku: 'book', qty: 2, total: 2400 });
    const recovered = report.problems.filter((p) => p.property === 'recovered-run');
    expect(recovered.length).toBeGreaterThan(0);
    for (const p of recovered) {
      expect(p.node).toBe('total');
      expect(p.message).toMatch(/"total":0.*"total":2400/);
    }
  });

  it('the price kept in the state: no problem from the factory either; a factory that builds another definition, or no workflow, is refused', async () => {
    const createGood = () => workflow({ name: 'cart', version: '1', state: Cart.extend({ price: z.number().optional() }) })
      .effect('price', { run: (s) => ({ price: prices.get(s.sku) }), apply: (_s, r) => ({ price: r.price }), next: 'total' })
      .pure('total', { run: (s) => ({ total: (s.price ?? 0) * s.qty }), next: END })
      .build();
    expect((await checkWorkflow(createGood, { input: { sku: 'book', qty: 2 }, core: 'reference' })).problems).toEqual([]);
    let version = 0;
    const drifting = () => workflow({ name: 'drift', version: String(++version), state: Cart }).pure('a', { run: () => ({}), next: END }).build();
    await expect(checkWorkflow(drifting, { input: { sku: 'x', qty: 1 }, core: 'reference' })).rejects.toMatchObject({ name: 'ArgumentInvalidError', message: expect.stringMatching(/a function that builds the same definition at every call/) });
    await expect(checkWorkflow((() => ({})) as never, { input: {}, core: 'reference' } as never)).rejects.toMatchObject({ name: 'ArgumentInvalidError', message: expect.stringMatching(/a function that returned an object that is not a built workflow/) });
  });
});

describe('a workflow factory that is an async function', () => {
  it('is refused, saying to build the workflow synchronously; a rejection of its Promise is not left unhandled (it was: "a function that returned an object that is not a built workflow", and an unhandled rejection)', async () => {
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const loading = async () => { await Promise.resolve(); throw new Error('the price service did not answer'); };
      await expect(checkWorkflow(loading as never, { input: {}, core: 'reference' } as never)).rejects.toMatchObject({
        name: 'ArgumentInvalidError',
        message: expect.stringMatching(/a function that returned a Promise \(an async function\): build the workflow synchronously/),
      });
      // An unhandled rejection is reported after the microtasks of the turn it happened in.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });
});
