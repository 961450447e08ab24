/**
 * Worker threads of one process, each with a Remit under the same instance id (a pod name, as the
 * guide advises for a replica): each thread has its own in-process registry of running effect
 * calls, so before, a thread that found the attempt another thread was executing took it for an
 * abandoned attempt of its own instance and called the handler a second time, with no crash, no
 * lease expired and no error. The owner written for a worker thread now names the thread too.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';

const root = mkdtempSync(join(tmpdir(), 'remit-fence-threads-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const boot = new URL('../../test-support/thread-boot.mjs', import.meta.url);
const module = new URL('../../test-support/fence-thread.worker.ts', import.meta.url).href;

type Outcome = { name: string; status?: string; code?: string; owner?: string };

function thread(data: Record<string, unknown>): { worker: Worker; outcome: Promise<Outcome> } {
  const worker = new Worker(boot, { workerData: { module, ...data } });
  const outcome = new Promise<Outcome>((resolve, reject) => {
    let posted: Outcome | undefined;
    worker.once('message', (m: Outcome) => (posted = m));
    worker.once('error', reject);
    worker.once('exit', () => (posted ? resolve(posted) : reject(new Error(`thread ${String(data['name'])} posted nothing`))));
  });
  return { worker, outcome };
}

const calls = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { name: string; attempt: number });

describe('worker threads sharing one instance id on one SQLite file', () => {
  it('a thread continuing the run while another thread runs its handler calls nothing: EffectInFlightError', async () => {
    const db = join(root, 'threads.db');
    const callsFile = join(root, 'calls.jsonl');
    const common = { db, calls: callsFile, instanceId: 'pod-1' };
    // A's handler returns only once B has its outcome (a 3 s handler was over before B's thread
    // had even loaded on a slow machine: B then found the run completed).
    const starting = thread({ ...common, op: 'start', name: 'A', holdHandler: true });
    // B starts once A's handler is running (its call is in the file).
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      try {
        if (calls(callsFile).length > 0) break;
      } catch { /* not written yet */ }
      await new Promise((r) => setTimeout(r, 20));
    }
    let continuing: Outcome;
    try {
      continuing = await thread({ ...common, op: 'continue', name: 'B', holdHandler: false }).outcome;
    } finally {
      starting.worker.postMessage('release');
    }
    const started = await starting.outcome;
    expect(calls(callsFile).map((c) => `${c.name}#${c.attempt}`)).toEqual(['A#1']);
    expect(started).toEqual({ name: 'A', status: 'completed' });
    expect(continuing).toMatchObject({ name: 'B', code: 'REMIT_EFFECT_IN_FLIGHT' });
    expect(continuing.owner).toMatch(/^pod-1#thread-\d+$/);
  });
});

describe('node:cluster workers given one instance id (PM2 cluster mode, a zero-downtime reload; found by a review)', () => {
  it('each writes its own owner, <id>#worker-<n>, and so do the worker threads it starts: one no longer takes an attempt another is running for an abandoned one of its own', () => {
    // Before, both wrote pod-1: a worker continuing a run whose handler another worker was running
    // took that attempt over at once ("own-idle") and called the handler a second time.
    const index = new URL('../index.ts', import.meta.url).href;
    const script = join(root, 'cluster-owners.mts');
    const threadModuleFile = join(root, 'cluster-thread.mts');
    const threadModule = pathToFileURL(threadModuleFile).href;
    writeFileSync(script, `
      import cluster from 'node:cluster';
      import { createRemit, openMemoryStore } from '${index}';
      if (cluster.isPrimary) {
        const owners: string[] = [];
        for (let i = 0; i < 2; i++) cluster.fork().on('message', (owner: string) => owners.push(owner));
        let exited = 0;
        cluster.on('exit', () => { if (++exited === 2) console.log(JSON.stringify(owners.sort())); });
      } else {
        const remit = await createRemit({ store: openMemoryStore(), workflows: [], core: 'reference', instanceId: 'pod-1' });
        // A worker thread of the cluster worker: Node hides the cluster from it, and its thread id
        // is the same in both workers (the first thread of each process).
        const { Worker } = await import('node:worker_threads');
        const thread = new Worker(new URL('${boot.href}'), { workerData: { module: '${threadModule}' } });
        const inThread = await new Promise<string>((resolve, reject) => { thread.once('message', resolve); thread.once('error', reject); });
        process.send!(remit.instanceId + ' ' + inThread, () => process.exit(0));
      }
    `);
    writeFileSync(threadModuleFile, `
      import { parentPort } from 'node:worker_threads';
      import { createRemit, openMemoryStore } from '${index}';
      const remit = await createRemit({ store: openMemoryStore(), workflows: [], core: 'reference', instanceId: 'pod-1' });
      parentPort!.postMessage(remit.instanceId);
    `);
    const out = spawnSync(process.execPath, ['--conditions=remit-source', '--import', import.meta.resolve('tsx'), script], { encoding: 'utf8', timeout: 60_000 });
    expect(out.status, out.stderr).toBe(0);
    const owners = (JSON.parse(out.stdout.trim()) as string[]).map((line) => line.split(' '));
    expect(owners.map(([main]) => main)).toEqual(['pod-1#worker-1', 'pod-1#worker-2']);
    // Each thread's owner carries its worker's scope; the thread ids are the same number in both.
    for (const [main, thread] of owners) expect(thread).toMatch(new RegExp(`^${main}#thread-\\d+$`));
    expect(owners[0]![1]!.split('#thread-')[1]).toBe(owners[1]![1]!.split('#thread-')[1]);
  });
});
