/**
 * One worker thread of fence-threads.test.ts: a Remit on a shared SQLite file under the instance
 * id the test gives (every thread the same one, as a service would give its pod name), which
 * starts or continues run r of a one-effect workflow whose handler is slow. Posts its outcome.
 */

import { appendFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { z } from 'zod';
import { RemitError } from '../src/errors.js';
import { createRemit } from '../src/remit.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { END, workflow } from '../src/workflow/workflow.js';

const { db, calls, op, name, instanceId, handlerMs } = workflowData();

function workflowData() {
  return workerData as { db: string; calls: string; op: 'start' | 'continue'; name: string; instanceId: string; handlerMs: number };
}

const slow = workflow({ name: 'slow', version: '1', state: z.object({}) })
  .effect('charge', {
    run: async (_s, { idempotencyKey, attempt }) => {
      appendFileSync(calls, `${JSON.stringify({ name, key: idempotencyKey, attempt })}\n`);
      await new Promise((resolve) => setTimeout(resolve, handlerMs));
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
