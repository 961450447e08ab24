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
});
