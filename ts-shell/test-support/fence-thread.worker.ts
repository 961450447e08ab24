/**
 * One worker thread of fence-threads.test.ts: a Remit on a shared SQLite file under the instance
 * id the test gives (every thread the same one, as a service would give its pod name), which
 * starts or continues run r of a one-effect workflow. Its handler writes its call to the calls
 * file, then returns when the test posts 'release' to the thread (holdHandler), or at once.
 * Posts its outcome.
 */

import { appendFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { z } from 'zod';
import { RemitError } from '../src/errors.js';
import { createRemit } from '../src/remit.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { END, workflow } from '../src/workflow/workflow.js';

const { db, calls, op, name, instanceId, holdHandler } = workflowData();

function workflowData() {
  return workerData as { db: string; calls: string; op: 'start' | 'continue'; name: string; instanceId: string; holdHandler: boolean };
}

/** Resolves when the test posts 'release' (listened for from the start: a message is not lost). */
const released = new Promise<void>((resolve) => {
  const onMessage = (message: unknown) => {
    if (message !== 'release') return;
    parentPort!.off('message', onMessage);
    resolve();
  };
  if (holdHandler) parentPort!.on('message', onMessage);
});

const slow = workflow({ name: 'slow', version: '1', state: z.object({}) })
  .effect('charge', {
    run: async (_s, { idempotencyKey, attempt }) => {
      appendFileSync(calls, `${JSON.stringify({ name, key: idempotencyKey, attempt })}\n`);
      if (holdHandler) await released;
      return { ok: true };
    },
    next: END,
  })
  .build();

const remit = await createRemit({ store: new SqliteStore(db), workflows: [slow], core: 'reference', instanceId });
try {
  const result = op === 'start' ? await remit.start(slow, {}, { runId: 'r' }) : await remit.continueRun('r');
  parentPort!.postMessage({ name, status: result.status });
} catch (error) {
  parentPort!.postMessage({ name, code: error instanceof RemitError ? error.code : String(error), owner: (error as { owner?: string }).owner });
} finally {
  await remit.close();
}
