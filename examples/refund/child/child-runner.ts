/**
 * A child process that drives one refund run against a SQLite file, for the demo and the
 * child-process tests (real SIGKILL, several processes on one database). Run it with
 * `node --import tsx child-runner.ts '<json ChildSpec>'`.
 *
 * stdout carries one JSON object per line: {"event":"ready"}, {"event":"fault",...},
 * {"event":"result","result":...} or {"event":"error","error":...} (the error's JSON, with its
 * code). Exit code 0 with a result, 1 with an error. With `waitForGo`, the child loads everything, prints "ready" and
 * waits for a line on stdin, so a parent can release several children at once.
 */

import { createInterface } from 'node:readline';
import { createRemit, openSqliteStore, RemitError, type FaultInfo, type FaultPoint } from 'remit';
import { FileEffectSink, hooksFor, InjectedFault, NO_HOOKS, parseFaultSpec } from 'remit/testing';
import { sinkDeps } from '../deps.js';
import { createRefundWorkflow } from '../workflow.js';

export interface ChildSpec {
  db: string;
  sinkDir: string;
  core: 'wasm' | 'reference';
  action: 'start' | 'continue' | 'resume';
  runId: string;
  input?: unknown;
  interruptId?: string;
  value?: unknown;
  /** A fault spec (fault-spec.ts) and what to do there. */
  fault?: { at: string; mode: 'kill' | 'pause' | 'throw' };
  waitForGo?: boolean;
  synchronous?: 'FULL' | 'NORMAL';
  /** The sequencer's instance id (a restarted replica reuses its own) and lease; default: createRemit's. */
  instanceId?: string;
  effectLeaseMs?: number;
  /** For 'continue': wait this long for another process's effect attempt instead of failing at once. */
  waitForEffectMs?: number;
}

function emit(event: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(event) + '\n');
}

async function onFault(mode: 'kill' | 'pause' | 'throw', point: FaultPoint, info: FaultInfo): Promise<void> {
  emit({ event: 'fault', mode, point, info });
  if (mode === 'kill') process.kill(process.pid, 'SIGKILL');
  if (mode === 'throw') throw new InjectedFault(point, info);
  // pause: wait here until the parent kills this process.
  await new Promise(() => setInterval(() => {}, 60_000));
}

async function waitForGo(): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => lines.once('line', () => resolve()));
  lines.close();
}

async function main(): Promise<number> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as ChildSpec;
  const hooks = spec.fault ? hooksFor(parseFaultSpec(spec.fault.at), (p, i) => onFault(spec.fault!.mode, p, i)) : NO_HOOKS;
  const refund = createRefundWorkflow(sinkDeps(new FileEffectSink(spec.sinkDir)));
  const store = openSqliteStore(spec.db, { synchronous: spec.synchronous ?? 'FULL', busyTimeoutMs: 10_000 });
  const remit = await createRemit({
    store, workflows: [refund], core: spec.core, hooks,
    ...(spec.instanceId === undefined ? {} : { instanceId: spec.instanceId }),
    ...(spec.effectLeaseMs === undefined ? {} : { effectLeaseMs: spec.effectLeaseMs }),
  });
  if (spec.waitForGo) {
    emit({ event: 'ready', pid: process.pid });
    await waitForGo();
  }
  try {
    const result =
      spec.action === 'start' ? await remit.start(refund, spec.input as never, { runId: spec.runId })
      : spec.action === 'resume' ? await remit.resume(spec.runId, spec.interruptId!, spec.value)
      : await remit.continueRun(spec.runId, spec.waitForEffectMs === undefined ? {} : { waitForEffectMs: spec.waitForEffectMs });
    emit({ event: 'result', result });
    return 0;
  } catch (error) {
    emit({ event: 'error', error: error instanceof RemitError ? error.toJSON() : { name: (error as Error).name, message: String((error as Error).message) } });
    return 1;
  } finally {
    await remit.close();
  }
}

process.exitCode = await main();
