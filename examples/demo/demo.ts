/**
 * The crash demo (`npm run demo`): the refund example survives a real SIGKILL. A child process
 * starts a run and pauses at a fault point (default: inside chargeCard, after the card was
 * credited and before that is recorded); this process kills it with SIGKILL, recovers the run
 * from the SQLite file, resumes the manager approval, and shows the log and what reached the
 * outside world. Everything here uses REMIT's public API ('remit', 'remit/testing').
 */

import { dirname, join } from 'node:path';
import { createRemit, openSqliteStore, renderInspection } from 'remit';
import { FileEffectSink, type EffectCounts } from 'remit/testing';
import { sinkDeps } from '../refund/deps.js';
import { sampleApproval, sampleInput } from '../refund/index.js';
import { createRefundWorkflow } from '../refund/workflow.js';
import { spawnChild } from '../refund/child/spawn-child.js';

export const DEFAULT_DEMO_KILL_AT = 'effect.after-handler@chargeCard';

/**
 * The child and this process play one replica restarting after its crash: the same instance id,
 * so the recovery takes over the child's unfinished effect attempt at once instead of waiting for
 * its lease (docs/guide.md, "Concurrent sequencers").
 */
const DEMO_INSTANCE_ID = 'demo-replica';

export interface DemoSummary {
  runId: string;
  db: string;
  killedAt: string;
  childSignal: string | null;
  recordsAfterCrash: number;
  finalStatus: string;
  effects: EffectCounts['byEffect'];
  exactlyOnce: boolean;
}

export async function runDemo(args: { db: string; core: 'wasm' | 'reference'; killAt: string; log: (line: string) => void }): Promise<DemoSummary> {
  const { db, core, killAt, log } = args;
  const runId = `demo-${new Date().toISOString().replace(/[-:.TZ]/g, '').slice(0, 14)}-${process.pid}`;
  const sinkDir = join(dirname(db), 'demo-effects', runId);

  log(`REMIT demo: run ${runId} of the refund workflow, database ${db}, ${core} core`);
  log(`[1/5] a child process starts the run and will be killed at ${killAt}`);
  const child = spawnChild({ db, sinkDir, core, action: 'start', runId, input: sampleInput, fault: { at: killAt, mode: 'pause' }, instanceId: DEMO_INSTANCE_ID });
  const exitEarly = child.exited.then((exit) => exit);
  const paused = await Promise.race([child.waitFor('fault', 60_000), exitEarly.then(() => null)]);
  if (!paused) {
    const exit = await exitEarly;
    throw new Error(`the child finished before reaching ${killAt} (exit ${exit.code}); events: ${JSON.stringify(exit.events)}; stderr: ${exit.stderr}`);
  }
  const info = paused['info'] as { seq: number; node?: string };
  log(`      child pid ${child.process.pid} is at ${paused['point']}${info.node ? ` in ${info.node}` : ''} (next seq ${info.seq})`);

  log(`[2/5] kill -9 ${child.process.pid}`);
  child.kill('SIGKILL');
  const exit = await child.exited;
  log(`      child exited with signal ${exit.signal}`);

  const store = openSqliteStore(db);
  const refund = createRefundWorkflow(sinkDeps(new FileEffectSink(sinkDir)));
  const remit = await createRemit({ store, workflows: [refund], core, instanceId: DEMO_INSTANCE_ID });
  try {
    const crashed = await remit.inspect(runId);
    log(`      durable after the crash: ${crashed.records.map((r) => `${r.seq} ${r.kind}${r.node ? ` ${r.node}` : ''}`).join(', ')}`);
    log(`      the core's next action: ${crashed.nextAction}`);

    log(`[3/5] recover in this process, as the same replica (instance id ${DEMO_INSTANCE_ID}): continueRun(${runId})`);
    const recovered = await remit.continueRun(runId);
    log(`      ${recovered.status}${recovered.interrupt ? ` at ${recovered.interrupt.id}` : ''}`);

    let finalStatus = recovered.status;
    if (recovered.interrupt) {
      log(`[4/5] the manager approves: resume(${runId}, ${recovered.interrupt.id}, ${JSON.stringify(sampleApproval)})`);
      const done = await remit.resume(runId, recovered.interrupt.id, sampleApproval);
      finalStatus = done.status;
      log(`      ${done.status}`);
    } else {
      log('[4/5] nothing to resume');
    }

    log('[5/5] the log:');
    log(renderInspection(await remit.inspect(runId)).split('\n').map((l: string) => '      ' + l).join('\n'));
    const counts = await new FileEffectSink(sinkDir).counts();
    const rows = Object.entries(counts.byEffect).map(([effect, c]) => {
      const keys = Object.values(counts.byKey).filter((k) => k.effect === effect).length;
      return [effect, String(c.invocations), String(c.applied), String(keys)];
    });
    log('      effects at the sink (a provider that deduplicates by idempotency key):');
    log(formatTable(['effect', 'handler calls', 'applied', 'keys'], rows).map((l) => '      ' + l).join('\n'));
    const exactlyOnce = Object.values(counts.byKey).every((k) => k.applied === 1) && Object.keys(counts.byEffect).length > 0;
    log(`      every effect applied exactly once: ${exactlyOnce ? 'yes' : 'NO'}${rows.some((r) => Number(r[1]) > Number(r[2])) ? ' (a handler call after the crash reused the recorded key, so the provider did not apply it again)' : ''}`);
    return {
      runId, db, killedAt: killAt, childSignal: exit.signal, recordsAfterCrash: crashed.records.length, finalStatus,
      effects: counts.byEffect, exactlyOnce,
    };
  } finally {
    await remit.close();
  }
}

/** A plain text table, columns padded to their widest cell. */
function formatTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}
