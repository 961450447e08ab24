/**
 * Arguments of the public API (docs/guide.md, "Limits"; docs/errors.md): run ids must be
 * well-formed Unicode with at least one visible character, on every store; sequence numbers and
 * interrupt ids that cannot name anything get REMIT_ARGUMENT_INVALID saying what was expected,
 * never the core's internal refusal. Nothing is written by a refused call.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { Remit } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { openPostgresStore } from './store/postgres.js';
import { SqliteStore } from './store/sqlite.js';
import type { Store } from './store/store.js';
import { describePg, dropSchemas, freshSchemaName } from '../test-support/postgres-test-env.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const dir = mkdtempSync(join(tmpdir(), 'remit-args-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const wf = workflow({ name: 'args', version: '1', state: z.object({ n: z.number(), ok: z.boolean().optional() }) })
  .pure('bump', { run: (s) => ({ n: s.n + 1 }), next: 'ask' })
  .interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: END })
  .build();

/** Ids that must be refused: ill-formed UTF-16, nothing visible, control characters. */
const BAD_RUN_IDS: Array<[string, string]> = [
  ['a lone high surrogate', 'order-\ud800-1'],
  ['a lone low surrogate', '\udc00'],
  ['only spaces', '   '],
  ['only a tab-free mix of blanks', '\u00a0\u2003\u3000'],
  ['only zero-width characters', '\u200b\u200d\ufeff'],
  ['a line separator', 'a\u2028b'],
  ['a control character', 'a\u0007b'],
  ['nothing', ''],
];
/** Ids that must be accepted and kept exactly. */
const GOOD_RUN_IDS = ['order-1042', 'commande-été-№7', '注文-٣', 'emoji-🦀-run', 'spaces inside', 'e\u0301-combining'];

function describeRunIds(name: string, open: () => Promise<Store>) {
  describe(`run ids on the ${name} store`, () => {
    for (const [label, id] of BAD_RUN_IDS) {
      it(`refuses ${label} everywhere it is given, and writes nothing`, async () => {
        const store = await open();
        const remit = new Remit(store, core, [wf]);
        const invalid = { code: 'REMIT_RUN_ID_INVALID' };
        await expect(remit.start(wf, { n: 0 }, { runId: id })).rejects.toMatchObject(invalid);
        await expect(remit.status(id)).rejects.toMatchObject(invalid);
        await expect(remit.continueRun(id)).rejects.toMatchObject(invalid);
        await expect(remit.inspect(id)).rejects.toMatchObject(invalid);
        await remit.start(wf, { n: 0 }, { runId: 'source' });
        // The source run is the run of the call: named beside the argument.
        await expect(remit.fork('source', 1, { newRunId: id })).rejects.toMatchObject({ ...invalid, runId: 'source', field: 'options.newRunId of fork' });
        expect((await store.listRuns()).map((r) => r.runId)).toEqual(['source']);
        await store.close();
      });
    }

    it('keeps well-formed ids exactly: listed, recovered by recoverAll, resumed', async () => {
      const store = await open();
      const stopAtPark: Remit = new Remit(store, core, [wf], {
        at: (point, info) => {
          if (point === 'append.before' && info.kinds?.includes('INTERRUPT_PARKED')) throw new Error('crash before the park');
        },
      });
      for (const id of GOOD_RUN_IDS) await expect(stopAtPark.start(wf, { n: 0 }, { runId: id })).rejects.toThrow('crash before the park');
      const remit = new Remit(store, core, [wf]);
      expect((await remit.runs()).map((r) => [r.runId, r.status]).sort()).toEqual(GOOD_RUN_IDS.map((id) => [id, 'running']).sort());
      const recovered = await remit.recoverAll();
      expect(recovered.map((o) => ('result' in o ? [o.runId, o.result.status, o.result.runId] : [o.runId, String(o.error)])).sort()).toEqual(
        GOOD_RUN_IDS.map((id) => [id, 'parked', id]).sort(),
      );
      for (const id of GOOD_RUN_IDS) expect((await remit.resume(id, 'ask@2', { ok: true })).status).toBe('completed');
      await store.close();
    });
  });
}

describeRunIds('memory', async () => new MemoryStore());
describeRunIds('SQLite', async () => new SqliteStore(join(dir, `${Math.random().toString(36).slice(2)}.db`)));
describePg('run ids on PostgreSQL', (url) => {
  const schemas: string[] = [];
  afterAll(() => dropSchemas(url, schemas));
  describeRunIds('PostgreSQL', async () => {
    const schema = freshSchemaName('remit_ids');
    schemas.push(schema);
    return openPostgresStore({ connectionString: url, schema });
  });
});

describe('run ids whose effect keys would not fit the log', () => {
  // "/" takes three bytes in a key: a 200-byte id of them and a 200-byte node name of them give
  // keys of up to 1212 bytes, over the log's 1024-byte names.
  const slashes = '/'.repeat(200);
  const wide = workflow({ name: 'wide-keys', version: '1', state: z.object({ n: z.number() }) })
    .effect(slashes, { run: () => ({}), next: END })
    .build();

  it('are refused naming the argument the id came from (start, fork), and nothing is written', async () => {
    const store = new MemoryStore();
    const remit = new Remit(store, core, [wide]);
    await expect(remit.start(wide, { n: 0 }, { runId: slashes })).rejects.toMatchObject({
      code: 'REMIT_RUN_ID_INVALID', field: 'options.runId of start', message: expect.stringMatching(/\(options\.runId of start\): its effect keys could reach 1212 bytes/),
    });
    await remit.start(wide, { n: 0 }, { runId: 'source' });
    await expect(remit.fork('source', 0, { newRunId: slashes })).rejects.toMatchObject({
      code: 'REMIT_RUN_ID_INVALID', field: 'options.newRunId of fork', runId: 'source', message: expect.stringMatching(/\(options\.newRunId of fork\): its effect keys could reach 1212 bytes/),
    });
    expect((await store.listRuns()).map((r) => r.runId)).toEqual(['source']);
    // A default fork id is made to fit.
    await expect(remit.fork('source', 0)).resolves.toMatchObject({ sourceRunId: 'source', checkpointSeq: 0 });
  });
});

describe('sequence numbers and interrupt ids', () => {
  async function parked() {
    const store = new MemoryStore();
    const remit = new Remit(store, core, [wf]);
    await remit.start(wf, { n: 0 }, { runId: 'r' });
    return { store, remit, before: await store.readLog('r') };
  }

  const BAD_SEQS: unknown[] = [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 32, 2 ** 53, '1', null];

  for (const seq of BAD_SEQS) {
    it(`fork and continueRun refuse seq ${String(seq)} as an argument error saying what was expected`, async () => {
      const { store, remit, before } = await parked();
      for (const call of [() => remit.fork('r', seq as number), () => remit.continueRun('r', { fromSeq: seq as number })]) {
        const error = await call().catch((e) => e);
        expect(error).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', runId: 'r' });
        expect(String(error.message)).toMatch(/an integer from 0 to 4294967295/);
        expect(error.code).not.toBe('REMIT_CORE_REFUSED');
      }
      expect(await store.readLog('r')).toEqual(before);
    });
  }

  it('fork at -0 is the fork at checkpoint 0 and reports seq 0, not -0', async () => {
    const { remit } = await parked();
    const fork = await remit.fork('r', -0);
    expect(Object.is(fork.checkpointSeq, 0)).toBe(true);
    expect(fork.forkSeq).toBe(1);
  });

  it('a seq in range but past the head is refused as beyond the head, not as an argument error', async () => {
    const { remit } = await parked();
    await expect(remit.fork('r', 2 ** 32 - 1)).rejects.toMatchObject({ code: 'REMIT_BEYOND_HEAD', runId: 'r' });
    await expect(remit.continueRun('r', { fromSeq: 40 })).rejects.toMatchObject({ code: 'REMIT_BEYOND_HEAD', runId: 'r' });
  });

  const BAD_INTERRUPT_IDS: unknown[] = ['', 'ask', 'ask@', '@2', 'ask@-2', 'ask@2.0', 'ask@02', 'ask@x', 'ask@4294967296', 42, null, undefined];
  for (const id of BAD_INTERRUPT_IDS) {
    it(`resume refuses the malformed interrupt id ${JSON.stringify(id) ?? 'undefined'} saying the form is node@seq`, async () => {
      const { store, remit, before } = await parked();
      const error = await remit.resume('r', id as string, { ok: true }).catch((e) => e);
      expect(error).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', runId: 'r', argument: 'interruptId' });
      expect(String(error.message)).toMatch(/node@seq/);
      expect(await store.readLog('r')).toEqual(before);
    });
  }

  it('resume(interruptId, runId, value), the first two swapped, is refused saying what to do if they were; a malformed id alone does not', async () => {
    const { store, remit, before } = await parked();
    const swapped = await remit.resume('ask@1', 'r', { ok: true }).catch((e) => e);
    expect(swapped).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', argument: 'interruptId' });
    expect(String(swapped.message)).toMatch(/got "r" \(the run id "ask@1" has an interrupt id's form: if the first two arguments were swapped, resume takes \(runId, interruptId, value\)\)/);
    expect(String((await remit.resume('r', 'ask', { ok: true }).catch((e) => e)).message)).not.toMatch(/swapped/);
    expect(await store.readLog('r')).toEqual(before);
  });

  it('a well-formed interrupt id that names nothing parked is still UNKNOWN_INTERRUPT', async () => {
    const { remit } = await parked();
    await expect(remit.resume('r', 'ask@7', { ok: true })).rejects.toMatchObject({ code: 'REMIT_UNKNOWN_INTERRUPT' });
    await expect(remit.resume('r', 'nope@2', { ok: true })).rejects.toMatchObject({ code: 'REMIT_UNKNOWN_INTERRUPT' });
    expect((await remit.resume('r', 'ask@2', { ok: true })).status).toBe('completed');
  });
});
