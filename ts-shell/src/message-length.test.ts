/**
 * An error's message quotes a caller's text cut short (a key, a route's answer, what node code
 * threw) and lists at most ten validation issues, so that a request's value cannot make a logged
 * line megabytes long (100,000 bad items of one array gave a 5.9 MB message, a 1 MB key a 2 MB
 * one). The error's fields (issues, field, cause, target) keep the text whole.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { HandlerThrewError, RemitError, ResumeValueInvalidError, RouteInvalidError } from './errors.js';
import { Remit } from './remit.js';
import { isWellFormedUnicode } from './json.js';
import { MemoryStore } from './store/memory.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const MB_KEY = 'k'.repeat(1_000_000);
/** Far more than any message needs, far less than the caller's text. */
const SHORT = 5_000;

const asking = workflow({ name: 'asking', version: '1', state: z.object({ xs: z.array(z.number()).optional(), at: z.unknown().optional() }) })
  .interrupt('ask', { resume: z.object({ xs: z.array(z.number()) }), apply: (_s, v) => ({ xs: v.xs }), next: END })
  .build();

async function parked() {
  const remit = new Remit(new MemoryStore(), core, [asking]);
  const run = await remit.start(asking, {}, { runId: 'r' });
  return { remit, id: run.interrupt!.id };
}

describe('error messages quoting a caller\'s text', () => {
  it('list ten issues of 100,000, and the error\'s issues hold them all', async () => {
    const { remit, id } = await parked();
    const error = await remit.resume('r', id, { xs: Array.from({ length: 100_000 }, () => 'a') }).catch((e: unknown) => e) as ResumeValueInvalidError;
    expect(error).toBeInstanceOf(ResumeValueInvalidError);
    expect(error.message.length).toBeLessThan(SHORT);
    expect(error.message).toMatch(/; and 99990 more \(the error's issues lists all 100000\); the interrupt was not consumed/);
    expect(error.issues).toHaveLength(100_000);
  });

  it('cut a megabyte key, in the issue, the dropped field and the subject, and keep it whole in field', async () => {
    const { remit, id } = await parked();
    const error = await remit.resume('r', id, { xs: [1], [MB_KEY]: 1 }).catch((e: unknown) => e) as ResumeValueInvalidError;
    expect(error).toBeInstanceOf(ResumeValueInvalidError);
    expect(error.message.length).toBeLessThan(SHORT);
    expect(error.message).toMatch(/… \(1000000 characters\)/);
    expect(error.field).toBe(MB_KEY);
  });

  it('cut what node code threw, a route\'s answer and a path to a value JSON changes; the cause and target keep them', async () => {
    const long = 'x'.repeat(1_000_000);
    const throwing = workflow({ name: 'throwing', version: '1', state: z.object({ n: z.number() }) })
      .pure('p', { run: () => { throw new Error(long); }, next: END }).build();
    const routing = workflow({ name: 'routing', version: '1', state: z.object({ n: z.number() }) })
      .pure('p', { run: () => ({}), next: (() => long) as never }).build();
    const dating = workflow({ name: 'dating', version: '1', state: z.object({ at: z.record(z.string(), z.unknown()).optional() }) })
      .pure('p', { run: () => ({ at: { [MB_KEY]: new Date(0) } }), next: END }).build();
    const remit = new Remit(new MemoryStore(), core, [throwing, routing, dating]);
    const threw = await remit.start(throwing, { n: 0 }).catch((e: unknown) => e) as HandlerThrewError;
    expect(threw).toBeInstanceOf(HandlerThrewError);
    expect(threw.message.length).toBeLessThan(SHORT);
    expect((threw.cause as Error).message).toBe(long);
    const routed = await remit.start(routing, { n: 0 }).catch((e: unknown) => e) as RouteInvalidError;
    expect(routed).toBeInstanceOf(RouteInvalidError);
    expect(routed.message.length).toBeLessThan(SHORT);
    expect(routed.target).toBe(long);
    const dated = await remit.start(dating, {}).catch((e: unknown) => e) as RemitError;
    expect(dated.code).toBe('REMIT_VALUE_UNFAITHFUL');
    expect(dated.message.length).toBeLessThan(SHORT);
    expect(dated.field).toBe(`at.${MB_KEY}`);
  });

  it('cut in every refusal a request\'s value can reach: a value its schema refuses when read back, one nested too deep, a cycle, a toJSON that throws, an unknown option (from a review of own changes)', async () => {
    const reading = workflow({ name: 'reading', version: '1', state: z.object({ n: z.number() }) })
      .interrupt('ask', { resume: z.record(z.string(), z.string().transform(Number)), apply: () => ({}), next: END }).build();
    const anything = workflow({ name: 'anything', version: '1', state: z.object({ n: z.number() }) })
      .interrupt('ask', { resume: z.any(), apply: () => ({}), next: END }).build();
    const remit = new Remit(new MemoryStore(), core, [reading, anything]);
    const readParked = await remit.start(reading, { n: 0 }, { runId: 'reading' });
    const anyParked = await remit.start(anything, { n: 0 }, { runId: 'anything' });
    const refusals: unknown[] = [await remit.resume('reading', readParked.interrupt!.id, { [MB_KEY]: '5' }).catch((e: unknown) => e)];
    let deep: Record<string, unknown> = {};
    const top = deep;
    for (let i = 0; i < 300; i++) { const next = {}; deep['k'.repeat(100_000) + i] = next; deep = next; }
    const cyclic: Record<string, unknown> = { a: {} };
    (cyclic['a'] as Record<string, unknown>)[MB_KEY] = cyclic;
    for (const value of [top, cyclic, { a: { toJSON: () => { throw new Error('x'.repeat(1_000_000)); } } }]) {
      refusals.push(await remit.resume('anything', anyParked.interrupt!.id, value).catch((e: unknown) => e));
    }
    refusals.push(await remit.runs({ [MB_KEY]: 1 } as never).catch((e: unknown) => e));
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(RemitError);
      expect((refusal as Error).message.length, (refusal as RemitError).code).toBeLessThan(SHORT);
    }
    expect(refusals.map((e) => (e as RemitError).code)).toEqual(['REMIT_VALUE_UNFAITHFUL', 'REMIT_VALUE_UNFAITHFUL', 'REMIT_NOT_JSON', 'REMIT_NOT_JSON', 'REMIT_OPTION_INVALID']);
  });

  it('never cut between the halves of a surrogate pair', async () => {
    const { remit, id } = await parked();
    const error = await remit.resume('r', id, { xs: [1], ['x' + '😀'.repeat(150)]: 1 }).catch((e: unknown) => e) as Error;
    expect(isWellFormedUnicode(error.message)).toBe(true);
  });
});
