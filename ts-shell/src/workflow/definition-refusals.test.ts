/**
 * What a refused definition says, and what the guide says of runs whose definition is not the
 * registered one: another definition given to start() or register() is refused and not registered;
 * a parked run of a workflow no longer registered is not a candidate of recoverAll; a run recorded
 * under descriptor format 1 does not see what only the notes or the input side show.
 */

import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import { DefinitionInvalidError, UnknownWorkflowError } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { describeWorkflow, fingerprintOf } from './descriptor.js';
import { END, workflow, type Workflow } from './workflow.js';

const core = await createCore('reference');
const State = z.object({ a: z.string() });

const define = (name: string, version: string, state: z.ZodObject = State): Workflow =>
  workflow({ name, version, state })
    .interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: () => ({}), next: END })
    .build();

/** The guide's section `title`, up to the next heading. */
function guideSection(title: string): string {
  const guide = fs.readFileSync(new URL('../../../docs/guide.md', import.meta.url), 'utf8');
  const start = guide.indexOf(`### ${title}\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  const end = guide.indexOf('\n#', start + title.length + 5);
  return guide.slice(start, end < 0 ? undefined : end).replace(/\s+/g, ' ');
}

describe('another definition of a registered name (found by a review): refused, not registered, and said so', () => {
  it('start() given it says that start() was given a definition other than the registered one, which stays registered', async () => {
    const v1 = define('refund', '1');
    const remit = new Remit(new MemoryStore(), core, [v1]);
    const refused = await remit.start(define('refund', '2'), { a: 'x' }, { runId: 'a' }).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(DefinitionInvalidError);
    const message = (refused as Error).message;
    expect(message).toMatch(/^workflow refund: start\(\) was given a definition other than the one registered under this name, and did not register it \(version changed from 1 to 2\); /);
    expect(message).not.toMatch(/are registered/);
    expect(remit.workflowNamed('refund')).toBe(v1);
    expect((await remit.start('refund', { a: 'x' }, { runId: 'b' })).status).toBe('parked');
  });

  it('register() given it says register() was', () => {
    const remit = new Remit(new MemoryStore(), core, [define('refund', '1')]);
    expect(() => remit.register(define('refund', '2'))).toThrow(/^workflow refund: register\(\) was given a definition other than the one registered under this name, and did not register it \(version changed from 1 to 2\)/);
  });
});

describe('"Changing a workflow" says what happens to a run whose definition is not registered, as it happens (found by a review)', () => {
  it('a parked run of a removed workflow: recoverAll does not report it (only running runs are its candidates); resume throws UnknownWorkflowError; status shows it parked', async () => {
    const store = new MemoryStore();
    const parked = await new Remit(store, core, [define('refund', '1')]).start('refund', { a: 'x' }, { runId: 'p' });
    const later = new Remit(store, core, [define('refund-2', '1')]);
    expect(await later.recoverAll()).toEqual([]);
    await expect(later.resume('p', parked.interrupt!.id, { ok: true })).rejects.toBeInstanceOf(UnknownWorkflowError);
    expect((await later.status('p')).status).toBe('parked');
    const section = guideSection('Changing a workflow');
    expect(section).toMatch(/A running run of it found later is reported by `recoverAll` with `UnknownWorkflowError`/);
    expect(section).toMatch(/a parked one is not a candidate of `recoverAll`/);
    expect(section).not.toMatch(/A run of it found later is left as it is by `recoverAll` and reported with `UnknownWorkflowError`/);
  });

  it('a run recorded under descriptor format 1 continues after a .trim(), a z.coerce or a .strict() is added: its descriptor has no notes and no input side', async () => {
    const changes = [z.object({ a: z.string().trim() }), z.object({ a: z.coerce.string() }), z.strictObject({ a: z.string() })];
    for (const changed of changes) {
      const store = new MemoryStore();
      const current = define('shape', '1');
      const descriptor = describeWorkflow({ ...current, stateSchema: State }, 1);
      const fingerprint = fingerprintOf(descriptor);
      const asFormatOne: Workflow = { ...current, descriptor, fingerprint, fingerprintHex: Buffer.from(fingerprint).toString('hex'), formerFingerprints: [] };
      const parked = await new Remit(store, core, [asFormatOne]).start('shape', { a: ' x ' }, { runId: 'r' });
      expect((await new Remit(store, core, [define('shape', '1', changed)]).resume('r', parked.interrupt!.id, { ok: true })).status).toBe('completed');
    }
    expect(guideSection('Changing a workflow')).toMatch(/descriptor format 1 .*a `\.trim\(\)`, a `z\.coerce` or a `\.strict\(\)` added goes unseen/);
  });
});

describe('the advice of a refusal to drive a run, followed (from a review of deploys)', () => {
  it('a run whose workflow is no longer registered is told how to finish, and a start of an unknown name is not', async () => {
    const store = new MemoryStore();
    const v1 = define('refund', '1');
    const parked = await new Remit(store, core, [v1]).start(v1, { a: 'x' }, { runId: 'old' });
    const newer = new Remit(store, core, [define('refund-2', '1')]);
    const refused = await newer.resume('old', parked.interrupt!.id, { ok: true }).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(UnknownWorkflowError);
    expect((refused as Error).message).toMatch(/no workflow named "refund" is registered \(known: refund-2\); the run finishes when the definition it was started under is registered again, unchanged/);
    const unknownName = await newer.start('nope', { a: 'x' }, { runId: 'n' }).then(() => null, (e: unknown) => e);
    expect((unknownName as Error).message).not.toMatch(/the run finishes/);
    // Followed: registering the old definition again finishes it.
    newer.register(v1);
    expect(await newer.resume('old', parked.interrupt!.id, { ok: true })).toMatchObject({ status: 'completed' });
  });

  it('a changed definition kept under the run\'s name: the message says only an instance registering the old one finishes it', async () => {
    const store = new MemoryStore();
    const v1 = define('refund', '1');
    const parked = await new Remit(store, core, [v1]).start(v1, { a: 'x' }, { runId: 'old' });
    const changed = new Remit(store, core, [define('refund', '2')]);
    const refused = await changed.resume('old', parked.interrupt!.id, { ok: true }).then(() => null, (e: unknown) => e);
    expect((refused as Error).message).toMatch(/version changed from 1 to 2.*only an instance registering the old one, such as the old deployment, finishes this run/);
    // Registering both in one instance is refused, as the message says; another instance with the old one finishes the run.
    expect(() => changed.register(v1)).toThrow(DefinitionInvalidError);
    expect(await new Remit(store, core, [v1]).resume('old', parked.interrupt!.id, { ok: true })).toMatchObject({ status: 'completed' });
  });
});
