/**
 * What docs/guide.md tells users to rely on, checked as it is written there: an effect handler
 * that returns nothing ("Values in the log") and finishing the runs of a changed workflow
 * ("Changing a workflow").
 */

import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { checkWorkflow } from './testing/check-workflow.js';
import { DefinitionInvalidError, DefinitionMismatchError, UnknownWorkflowError } from './errors.js';
import { Remit } from './remit.js';
import { MemoryBacking, MemoryStore } from './store/memory.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');

describe('"Values in the log"', () => {
  it('a handler that returns nothing has null recorded: apply receives null, in the first run and after a recovery', async () => {
    const seen: unknown[] = [];
    const wf = workflow({ name: 'quiet', version: '1', state: z.object({ got: z.null().optional() }) })
      .effect('call', { run: async () => undefined, apply: (_s, result: unknown) => (seen.push(result), { got: null }), next: END })
      .build();
    const backing = new MemoryBacking();
    // The first run stops after the handler's EFFECT_DONE; a fresh instance applies the recorded result.
    const stop = { at(point: string, info: { kinds?: string[] }) { if (point === 'append.after' && info.kinds?.includes('EFFECT_DONE')) throw new Error('crash'); } };
    await expect(new Remit(new MemoryStore({ backing }), core, [wf], stop).start(wf, {}, { runId: 'q' })).rejects.toThrow('crash');
    const done = await new Remit(new MemoryStore({ backing }), core, [wf]).continueRun('q');
    expect(done).toMatchObject({ status: 'completed', state: { got: null } });
    expect(seen.every((value) => value === null)).toBe(true);
    expect(seen.length).toBeGreaterThan(0);
    const started = await new Remit(new MemoryStore(), core, [wf]).start(wf, {}, { runId: 'q2' });
    expect(started).toMatchObject({ status: 'completed', state: { got: null } });
  });
});

describe('"Values in the log": what JSON does not see', () => {
  it('a symbol-keyed, a non-enumerable and an array\'s named property are left out, alike in the step, in this process and in a fresh one', async () => {
    const withHidden = () => {
      const match = 'abc'.match(/b/)!; // an array with index, input and groups
      const hidden = { a: 1, [Symbol('meta')]: 2 };
      Object.defineProperty(hidden, 'secret', { value: 3, enumerable: false });
      return { match, hidden };
    };
    const seen: unknown[] = [];
    const State = z.object({ match: z.array(z.string()).optional(), hidden: z.object({ a: z.number() }).loose().optional(), done: z.boolean().optional() });
    const wf = workflow({ name: 'hidden-parts', version: '1', state: State })
      .pure('make', { run: () => withHidden(), next: 'look' })
      .interrupt('look', { resume: z.object({ hidden: z.object({ a: z.number() }).loose() }).loose(), apply: (s, value) => (seen.push(s, value), { done: true }), next: END })
      .build();
    const backing = new MemoryBacking();
    const parked = await new Remit(new MemoryStore({ backing }), core, [wf]).start(wf, {}, { runId: 'h' });
    const stored = { match: ['b'], hidden: { a: 1 } };
    expect(parked).toMatchObject({ status: 'parked' });
    // toStrictEqual does not see non-enumerable properties: each state's own keys are listed too.
    const ownKeys = (state: unknown) => {
      const { match, hidden } = state as { match: unknown[]; hidden: object };
      return { match: Reflect.ownKeys(match), hidden: Reflect.ownKeys(hidden) };
    };
    const keysStored = { match: ['0', 'length'], hidden: ['a'] };
    expect(parked.state).toStrictEqual(stored);
    expect(ownKeys(parked.state)).toEqual(keysStored);
    const fresh = new Remit(new MemoryStore({ backing }), core, [wf]);
    const freshState = (await fresh.status('h')).state;
    expect(freshState).toStrictEqual(stored);
    expect(ownKeys(freshState)).toEqual(keysStored);
    await fresh.resume('h', parked.status === 'parked' ? parked.interrupt.id : '', { hidden: withHidden().hidden });
    // apply runs again when the claim completes (the guide, "Interrupts"): each time it saw the same.
    expect(seen.length).toBeGreaterThan(0);
    for (let i = 0; i < seen.length; i += 2) expect(seen.slice(i, i + 2)).toStrictEqual([stored, { hidden: { a: 1 } }]);
  });
});

describe('"Changing a workflow"', () => {
  const State = z.object({ n: z.number(), ok: z.boolean().optional() });
  const define = (name: string, version: string, changed: boolean) => {
    const base = workflow({ name, version, state: State })
      .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: changed ? 'count' : END });
    return (changed ? base.pure('count', { run: (s) => ({ n: s.n + 1 }), next: END }) : base).build();
  };
  const v1 = define('refund', '1', false);

  it('two definitions of one name are refused, and the changed one alone refuses the old runs', async () => {
    const backing = new MemoryBacking();
    const parked = await new Remit(new MemoryStore({ backing }), core, [v1]).start(v1, { n: 0 }, { runId: 'old' });
    expect(() => new Remit(new MemoryStore({ backing }), core, [v1, define('refund', '2', true)])).toThrow(DefinitionInvalidError);
    await expect(new Remit(new MemoryStore({ backing }), core, [define('refund', '2', true)]).resume('old', parked.interrupt!.id, { ok: true }))
      .rejects.toBeInstanceOf(DefinitionMismatchError);
  });

  it('the old definition kept as it is and the changed one under a new name: old runs finish, new runs take the new one; then the old one goes', async () => {
    const backing = new MemoryBacking();
    const parked = await new Remit(new MemoryStore({ backing }), core, [v1]).start(v1, { n: 0 }, { runId: 'old' });
    const v2 = define('refund-2', '1', true);
    const both = new Remit(new MemoryStore({ backing }), core, [v1, v2]);
    const fresh = await both.start(v2, { n: 10 }, { runId: 'new' });
    expect(fresh).toMatchObject({ workflow: 'refund-2', status: 'parked' });
    expect(await both.resume('old', parked.interrupt!.id, { ok: true })).toMatchObject({ workflow: 'refund', status: 'completed', state: { n: 0, ok: true } });
    expect(await both.resume('new', fresh.interrupt!.id, { ok: true })).toMatchObject({ workflow: 'refund-2', status: 'completed', state: { n: 11, ok: true } });
    // No run of refund is left running or parked: an instance without it has nothing to refuse.
    expect((await both.runs()).filter((r) => r.workflow === 'refund' && (r.status === 'running' || r.status === 'parked'))).toEqual([]);
    expect(await new Remit(new MemoryStore({ backing }), core, [v2]).recoverAll()).toEqual([]);
  });

  it('recoverAll without the old definition leaves a running run of it as it is, reporting UnknownWorkflowError (DefinitionMismatchError under a changed one)', async () => {
    const backing = new MemoryBacking();
    const stop = { at(point: string, info: { kinds?: string[] }) { if (point === 'append.after' && info.kinds?.includes('RUN_STARTED')) throw new Error('crash'); } };
    const pure = workflow({ name: 'tally', version: '1', state: State }).pure('add', { run: (s) => ({ n: s.n + 1 }), next: END }).build();
    await expect(new Remit(new MemoryStore({ backing }), core, [pure], stop, { groupPureSteps: false }).start(pure, { n: 0 }, { runId: 't' })).rejects.toThrow('crash');
    const outcomes = await new Remit(new MemoryStore({ backing }), core, [v1]).recoverAll();
    expect(outcomes).toEqual([{ runId: 't', error: expect.any(UnknownWorkflowError) }]);
    // Under a changed definition of its name, the run is reported with DefinitionMismatchError, and left as it is.
    const changed = workflow({ name: 'tally', version: '2', state: State }).pure('add', { run: (s) => ({ n: s.n + 2 }), next: END }).build();
    const before = await new MemoryStore({ backing }).readRecords('t');
    expect(await new Remit(new MemoryStore({ backing }), core, [changed]).recoverAll()).toEqual([{ runId: 't', error: expect.any(DefinitionMismatchError) }]);
    expect(await new MemoryStore({ backing }).readRecords('t')).toEqual(before);
  });
});

describe('"Defining a workflow": every key workflow() and the node methods take is in the guide', () => {
  const guide = fs.readFileSync(new URL('../../docs/guide.md', import.meta.url), 'utf8');
  /** The keys a refusal of a misspelt key lists as known: `(known: a, b, c)`. */
  const knownKeys = (define: () => unknown): string[] => {
    try {
      define();
    } catch (error) {
      expect(error).toBeInstanceOf(DefinitionInvalidError);
      return /\(known: ([^)]*)\)/.exec((error as Error).message)![1]!.split(', ');
    }
    throw new Error('the misspelt key was not refused');
  };
  const State = z.object({});
  const base = () => workflow({ name: 'keys', version: '1', state: State });

  it.each([
    ['workflow()', () => workflow({ name: 'keys', version: '1', state: State, misspelt: 1 } as never)],
    ['.pure()', () => base().pure('a', { run: () => ({}), next: END, misspelt: 1 } as never)],
    ['.effect()', () => base().effect('a', { run: async () => null, next: END, misspelt: 1 } as never)],
    ['.interrupt()', () => base().interrupt('a', { resume: z.object({}), apply: () => ({}), next: END, misspelt: 1 } as never)],
  ])('%s', (_what, define) => {
    const keys = knownKeys(define);
    expect(keys.length).toBeGreaterThan(1);
    for (const key of keys) expect(guide.includes(`\`${key}\``) || guide.includes(`${key}:`), `${key} in docs/guide.md`).toBe(true);
  });

  it('an interrupt\'s apply is required and an effect\'s is not, as "Concepts" says', () => {
    expect(guide.replace(/\s+/g, ' ')).toMatch(/An interrupt's `apply` is required \(`DefinitionInvalidError`, field `apply`/);
    expect(() => base().interrupt('ask', { resume: z.object({}), next: END } as never)).toThrow(expect.objectContaining({ code: 'REMIT_DEFINITION_INVALID', node: 'ask', field: 'apply' }));
    expect(() => base().effect('call', { run: async () => null, next: END }).build()).not.toThrow();
  });

  it('node code gets the context "Concepts" names: run(state, { runId, node }) for a pure node, run(state, { idempotencyKey, attempt, runId, node }) for an effect', async () => {
    const flat = guide.replace(/\s+/g, ' ');
    expect(flat.includes('`run(state, { runId, node })`'), 'the pure context in docs/guide.md').toBe(true);
    expect(flat.includes('`run(state, { idempotencyKey, attempt, runId, node })`'), 'the effect context in docs/guide.md').toBe(true);
    const seen: Record<string, string[]> = {};
    const wf = base()
      .pure('p', { run: async (_s, ctx) => { seen['pure'] = Object.keys(ctx).sort(); return {}; }, next: 'e' })
      .effect('e', { run: async (_s, ctx) => { seen['effect'] = Object.keys(ctx).sort(); return ctx.attempt; }, next: END })
      .build();
    expect(await new Remit(new MemoryStore(), core, [wf]).start(wf, {}, { runId: 'ctx' })).toMatchObject({ status: 'completed' });
    expect(seen).toEqual({ pure: ['node', 'runId'], effect: ['attempt', 'idempotencyKey', 'node', 'runId'] });
  });

  it('a description is for people: not part of the fingerprint, and one that is not a string is refused', () => {
    const withDescription = (description: unknown) => workflow({ name: 'keys', version: '1', state: State, description: description as string }).pure('a', { run: () => ({}), next: END }).build();
    expect(withDescription('one').fingerprintHex).toBe(withDescription('two').fingerprintHex);
    expect(() => withDescription(5)).toThrow(expect.objectContaining({ code: 'REMIT_DEFINITION_INVALID', field: 'description' }));
  });
});

describe('"Checking your own workflow": the ranges of checkWorkflow\'s limits are the ones the guide states', () => {
  const guide = fs.readFileSync(new URL('../../docs/guide.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  const wf = workflow({ name: 'limits', version: '1', state: z.object({}) }).pure('a', { run: () => ({}), next: END }).build();
  const refusal = (option: string, value: number) =>
    checkWorkflow(wf, { input: {}, core: 'reference', [option]: value }).then(() => undefined, (error: unknown) => error);

  it.each([
    ['maxScenarios', 1, Number.MAX_SAFE_INTEGER, 'from 1'],
    ['maxResumes', 0, 1_000_000, '0 to 1 000 000'],
    ['maxRetries', 0, 100, '0 to 100'],
    ['maxSteps', 1, 10_000_000, '1 to 10 000 000'],
    ['stallLimitMs', 1, 2_147_483_647, '1 to 2147483647'],
  ])('%s', async (option, lowest, highest, stated) => {
    expect(guide.includes(`\`${option}\` ${stated}`), `docs/guide.md states ${option}'s range as ${stated}`).toBe(true);
    for (const value of [lowest - 1, highest + 1, lowest + 0.5]) {
      expect(await refusal(option, value), `${option}: ${value}`).toMatchObject({ code: 'REMIT_OPTION_INVALID', field: option });
    }
  });
});

describe('"Recovery at start-up": a stored status hint that is not a status', () => {
  it('is reported as unknown with the value beside it, and as a disagreement (unlike NULL), which repair corrects', async () => {
    const flat = fs.readFileSync(new URL('../../docs/guide.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(flat.includes('Unlike a NULL hint it is a disagreement'), 'docs/guide.md says so').toBe(true);
    const wf = workflow({ name: 'hinted', version: '1', state: z.object({}) }).interrupt('ask', { resume: z.any(), apply: () => ({}), next: END }).build();
    const backing = new MemoryBacking();
    const remit = new Remit(new MemoryStore({ backing }), core, [wf]);
    await remit.start(wf, {}, { runId: 'h' });
    (backing.runs.get('h') as unknown as { status: unknown }).status = 'bogus';
    expect(await remit.scrub('h')).toMatchObject({ logStatus: 'parked', statusHint: null, statusHintInvalid: 'bogus', statusHintAgrees: false });
    expect((await remit.runs())[0]).toMatchObject({ statusHint: null, statusHintInvalid: 'bogus', statusHintAgrees: false });
    expect(await remit.repair('h')).toMatchObject({ statusHintCorrected: 'parked' });
    expect(await remit.scrub('h')).toMatchObject({ statusHint: 'parked', statusHintAgrees: true });
  });
});

describe('"Checking your own workflow": every option checkWorkflow knows is in the guide, with its default', () => {
  it('names each key a misspelt option\'s refusal lists as known', async () => {
    const flat = fs.readFileSync(new URL('../../docs/guide.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    const wf = workflow({ name: 'opts', version: '1', state: z.object({}) }).pure('a', { run: () => ({}), next: END }).build();
    const refused = await checkWorkflow(wf, { input: {}, misspelt: 1 } as never).then(() => undefined, (error: unknown) => error as Error);
    const known = /\(known: ([^)]*)\)/.exec(refused!.message)![1]!.split(', ');
    expect(known).toContain('stallLimitMs');
    const sentence = flat.slice(flat.indexOf('Its options: `input`'), flat.indexOf('The report (`WorkflowCheckReport`)'));
    for (const key of known) expect(sentence.includes(`\`${key}\``), `${key} in the guide's list of checkWorkflow's options`).toBe(true);
    expect(sentence).toContain("`core` (default `'wasm'`");
  });
});
