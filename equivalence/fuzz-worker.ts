/**
 * One campaign worker (a worker thread of ./fuzz.ts, or the main thread with --workers 0): loads
 * the cores, runs the histories of each chunk it is given, reports progress, and on a divergence
 * shrinks it and reports it. Pure computation: the only I/O is the corpus file a divergence writes.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { createReferenceCore, reference, type ReferenceCanary } from 'remit/core';
import type { RecoveryCore } from 'remit/core';
import { loadWasmCore, type WasmBinding } from 'remit/core';
import { CampaignRunner, shrinkHistory, type CampaignOptions } from './campaign.js';

export interface WorkerOptions {
  campaign: CampaignOptions;
  against: 'wasm' | 'reference';
  binding: WasmBinding;
  canary: ReferenceCanary | null;
}

export type ToWorker = { type: 'chunk'; start: number; end: number } | { type: 'finish' };

export interface CampaignStats {
  histories: number;
  logs: number;
  recoverCalls: number;
  admitCalls: number;
  coverage: Array<[string, number]>;
}

export type FromWorker =
  | { type: 'ready'; coreNames: [string, string] }
  | { type: 'progress'; histories: number }
  | { type: 'chunk-done' }
  | { type: 'divergence'; index: number; source: string }
  | { type: 'shrunk'; index: number; message: string }
  | { type: 'finished'; stats: CampaignStats };

export async function coresFor(o: WorkerOptions): Promise<[RecoveryCore, RecoveryCore]> {
  if (o.canary) {
    process.env['REMIT_ALLOW_CANARY'] = '1';
    // Named apart from the clean reference, so that a divergence says which answer is the canary's.
    const name = `reference with canary ${o.canary}` as RecoveryCore['name'];
    return [{ ...createReferenceCore({ canary: o.canary }), name }, reference];
  }
  return [o.against === 'wasm' ? await loadWasmCore(undefined, { binding: o.binding }) : createReferenceCore(), reference];
}

const PROGRESS_EVERY = 32;

/**
 * The worker's side of the protocol, over any message channel (a thread port or a direct call).
 * The handler returns true once the worker has sent 'finished' (told to, or after a divergence).
 */
export async function startWorker(o: WorkerOptions, send: (m: FromWorker) => void): Promise<(m: ToWorker) => boolean> {
  const [a, b] = await coresFor(o);
  const runner = new CampaignRunner(a, b, o.campaign);
  send({ type: 'ready', coreNames: [a.name, b.name] });
  return (m) => {
    if (m.type === 'finish') {
      send({ type: 'finished', stats: statsOf(runner) });
      return true;
    }
    let sinceReport = 0;
    for (let index = m.start; index < m.end; index++) {
      const found = runner.runHistory(index);
      if (found) {
        send({ type: 'progress', histories: sinceReport + 1 });
        send({ type: 'divergence', index, source: found.source });
        const shrunk = shrinkHistory(a, b, o.campaign, index, found.divergence, {
          writeCorpus: o.canary === null, label: 'fuzz campaign',
        });
        send({ type: 'shrunk', index, message: shrunk.message });
        send({ type: 'finished', stats: statsOf(runner) });
        return true;
      }
      if (++sinceReport === PROGRESS_EVERY) {
        send({ type: 'progress', histories: sinceReport });
        sinceReport = 0;
      }
    }
    if (sinceReport > 0) send({ type: 'progress', histories: sinceReport });
    send({ type: 'chunk-done' });
    return false;
  };
}

function statsOf(runner: CampaignRunner): CampaignStats {
  return {
    histories: runner.histories, logs: runner.logs, recoverCalls: runner.comparison.stats.recoverCalls,
    admitCalls: runner.comparison.stats.admitCalls, coverage: [...runner.coverage.counts, ...oracleCounts(runner)],
  };
}

/** The extracted model's calls, and what was not sent to it, as coverage entries ("oracle: ..."). */
function oracleCounts(runner: CampaignRunner): Array<[string, number]> {
  const o = runner.comparison.oracle;
  if (!o) return [];
  return [
    ['oracle: model recover', o.stats.recoverCalls], ['oracle: model admit', o.stats.admitCalls],
    ['oracle: answers set by the reserved-id rule', o.stats.reservedRule],
    ...[...o.stats.unrepresentable].map(([why, n]): [string, number] => [`oracle: not sent (${why})`, n]),
  ];
}

if (parentPort && (workerData as { remitFuzzWorker?: WorkerOptions } | null)?.remitFuzzWorker) {
  const port = parentPort;
  const handle = await startWorker((workerData as { remitFuzzWorker: WorkerOptions }).remitFuzzWorker, (m) => port.postMessage(m));
  port.on('message', (m: ToWorker) => {
    if (handle(m)) port.close();
  });
}
