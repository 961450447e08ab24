/**
 * Worker threads of one process, each with a Remit under the same instance id (a pod name, as the
 * guide advises for a replica): each thread has its own in-process registry of running effect
 * calls, so before, a thread that found the attempt another thread was executing took it for an
 * abandoned attempt of its own instance and called the handler a second time, with no crash, no
 * lease expired and no error. The owner written for a worker thread now names the thread too.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';

const root = mkdtempSync(join(tmpdir(), 'remit-fence-threads-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const boot = new URL('../../test-support/thread-boot.mjs', import.meta.url);
const module = new URL('../../test-support/fence-thread.worker.ts', import.meta.url).href;

type Outcome = { name: string; status?: string; code?: string; owner?: string };

function thread(data: Record<string, unknown>): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(boot, { workerData: { module, ...data } });
    let outcome: Outcome | undefined;
    worker.once('message', (m: Outcome) => (outcome = m));
    worker.once('error', reject);
    worker.once('exit', () => (outcome ? resolve(outcome) : reject(new Error(`thread ${String(data['name'])} posted nothing`))));
  });
}

const calls = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { name: string; attempt: number });

describe('worker threads sharing one instance id on one SQLite file', () => {
  it('a thread continuing the run while another thread runs its handler calls nothing: EffectInFlightError', async () => {
    const db = join(root, 'threads.db');
    const callsFile = join(root, 'calls.jsonl');
    const common = { db, calls: callsFile, instanceId: 'pod-1', handlerMs: 3_000 };
    const starting = thread({ ...common, op: 'start', name: 'A' });
    // B starts once A's handler is running (its call is in the file).
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      try {
        if (calls(callsFile).length > 0) break;
      } catch { /* not written yet */ }
      await new Promise((r) => setTimeout(r, 20));
    }
    const continuing = await thread({ ...common, op: 'continue', name: 'B', handlerMs: 0 });
    const started = await starting;
    expect(calls(callsFile).map((c) => `${c.name}#${c.attempt}`)).toEqual(['A#1']);
    expect(started).toEqual({ name: 'A', status: 'completed' });
    expect(continuing).toMatchObject({ name: 'B', code: 'REMIT_EFFECT_IN_FLIGHT' });
    expect(continuing.owner).toMatch(/^pod-1#thread-\d+$/);
  });
});
