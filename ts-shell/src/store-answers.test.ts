/**
 * A custom store's answers of the wrong shape (store/answers.ts): each is a StoreError naming the
 * store, the operation and the run, never a bare TypeError and never a lost race. Before, an
 * append answered with `undefined` threw "Cannot read properties of undefined (reading
 * 'committed')", and a refusal reporting the run at the append's own seq made start() say "a run
 * with this id already exists" of a run that did not.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { StoreError } from './errors.js';
import { createRemit, END, openMemoryStore, workflow, type Store } from './index.js';

const wf = workflow({ name: 'w', version: '1', state: z.object({ n: z.number() }) })
  .pure('a', { run: (s) => ({ n: s.n + 1 }), next: END })
  .build();

/** The memory store with one method replaced. */
function storeWith(method: keyof Store, replacement: (...args: never[]) => unknown): { store: Store; base: Store } {
  const base = openMemoryStore();
  const store = Object.create(base) as Store;
  (store as unknown as Record<string, unknown>)[method] = replacement;
  return { store, base };
}

async function failure(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

describe("a custom store's answers of the wrong shape", () => {
  const appendAnswers: Array<[string, unknown, RegExp]> = [
    ['undefined', undefined, /answered the append of 1 record at seq 0 with undefined, not an outcome/],
    ['no committed', { nextSeq: 2 }, /whose committed is undefined, not true or false/],
    ['a string nextSeq', { committed: false, nextSeq: '3' }, /whose nextSeq is "3", not a whole number/],
    ['a tail that is not an array', { committed: false, nextSeq: 4, tail: {} }, /whose tail is object, not an array/],
    ['a refusal of the first record that says the run has none', { committed: false, nextSeq: 0 }, /refused the append of the run's first record while reporting that the run has none/],
  ];
  it.each(appendAnswers)('append answering %s is BAD_APPEND_OUTCOME naming the run and seq', async (_what, answer, message) => {
    const { store } = storeWith('append', async () => answer);
    const remit = await createRemit({ store, workflows: [wf], core: 'reference' });
    const error = await failure(remit.start(wf, { n: 0 }, { runId: 'r' }));
    expect(error).toMatchObject({ storeCode: 'BAD_APPEND_OUTCOME', operation: 'append', runId: 'r', seq: 0 });
    expect(error.message).toMatch(message);
  });

  it('a refusal at a later seq that reports the run at that seq is taken for a race (a repair and another writer can give it), and the run read again', async () => {
    const two = workflow({ name: 'two', version: '1', state: z.object({ n: z.number() }) })
      .pure('a', { run: (s) => ({ n: s.n + 1 }), next: 'b' })
      .pure('b', { run: (s) => ({ n: s.n + 1 }), next: END })
      .build();
    let refuseOnce = true;
    const base = openMemoryStore();
    const store = Object.create(base) as Store;
    store.append = async (runId, seq, records, summary, status) => {
      if (seq > 0 && refuseOnce) {
        refuseOnce = false;
        return { committed: false, nextSeq: seq };
      }
      return base.append(runId, seq, records, summary, status);
    };
    const remit = await createRemit({ store, workflows: [two], core: 'reference', groupPureSteps: false });
    const started = await remit.start(two, { n: 0 }, { runId: 'race' });
    // start() resolves once its RUN_STARTED committed: it reports the run as it stands.
    expect(started).toMatchObject({ status: 'running' });
    expect(await remit.continueRun('race')).toMatchObject({ status: 'completed', state: { n: 2 } });
  });

  it('fork answering something that is not a ForkOutcome is BAD_FORK_OUTCOME naming the new run', async () => {
    for (const answer of [undefined, { committed: false }, { committed: false, reason: 'NOPE' }, { committed: 'yes' }]) {
      const { store, base } = storeWith('fork', async () => answer);
      store.append = base.append.bind(base);
      const remit = await createRemit({ store, workflows: [wf], core: 'reference' });
      await remit.start(wf, { n: 0 }, { runId: 'src' });
      const error = await failure(remit.fork('src', 0, { newRunId: 'copy' }));
      expect(error).toMatchObject({ storeCode: 'BAD_FORK_OUTCOME', operation: 'fork', runId: 'copy' });
    }
  });

  it('readRecords, listRuns and listRunsToRecover answering the wrong shape are BAD_READ', async () => {
    const reads = storeWith('readRecords', async () => undefined);
    const remit = await createRemit({ store: reads.store, workflows: [wf], core: 'reference' });
    for (const call of [() => remit.status('r'), () => remit.inspect('r'), () => remit.continueRun('r')]) {
      const error = await failure(call());
      // The memory store's readRun reads through readRecords: the answer is refused at either.
      expect(error).toMatchObject({ storeCode: 'BAD_READ', operation: expect.stringMatching(/^read(Records|Run)$/), runId: 'r' });
      expect(error.message).toMatch(/answered undefined, not an array of records/);
    }
    const rows = storeWith('readRecords', async () => [{ bytes: new Uint8Array(4) }]);
    const remitRows = await createRemit({ store: rows.store, workflows: [wf], core: 'reference' });
    expect((await failure(remitRows.inspect('r'))).message).toMatch(/item 0 is object, not a record/);

    const listings = storeWith('listRuns', async () => undefined);
    const remitList = await createRemit({ store: listings.store, workflows: [wf], core: 'reference' });
    expect(await failure(remitList.runs())).toMatchObject({ storeCode: 'BAD_READ', operation: 'listRuns' });

    const candidates = storeWith('listRunsToRecover', async () => [7]);
    const remitRecover = await createRemit({ store: candidates.store, workflows: [wf], core: 'reference' });
    expect(await failure(remitRecover.recoverAll())).toMatchObject({ storeCode: 'BAD_READ', operation: 'listRunsToRecover' });
  });

  it('the built-in store answers pass the checks (a run started, forked, listed, recovered)', async () => {
    const remit = await createRemit({ store: openMemoryStore(), workflows: [wf], core: 'reference' });
    await remit.start(wf, { n: 0 }, { runId: 'r' });
    await remit.fork('r', 0, { newRunId: 'f' });
    expect((await remit.runs()).map((r) => r.runId).sort()).toEqual(['f', 'r']);
    expect(await remit.recoverAll()).toEqual([]);
    expect(await remit.continueRun('f')).toMatchObject({ status: 'completed' });
  });
});
