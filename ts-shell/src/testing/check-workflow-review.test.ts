/**
 * checkWorkflow under review as its users meet it: realistic workflows with the subtle bugs users
 * write, each of which must be reported with the right property and a message that names the node
 * and says what to change, and correct workflows of the same shapes, which must get no problem.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { END, workflow } from '../workflow/workflow.js';
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
