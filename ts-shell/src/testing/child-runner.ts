/**
 * A child process that drives one refund run against a SQLite file, for the demo and the
 * child-process tests (real SIGKILL, several processes on one database). Run it with
 * `node --import tsx child-runner.ts '<json ChildSpec>'`.
 *
 * stdout carries one JSON object per line: {"event":"ready"}, {"event":"fault",...},
 * {"event":"result","result":...} or {"event":"error","error":...}. The exit code is the CLI's
 * (errors.ts, exitCodeFor). With `waitForGo`, the child loads everything, prints "ready" and
 * waits for a line on stdin, so a parent can release several children at once.
 */

import { createInterface } from 'node:readline';
import { sinkDeps } from '../../../examples/refund/deps.js';
import { createRefundWorkflow } from '../../../examples/refund/workflow.js';
import { FileEffectSink } from '../effects/sink.js';
import { exitCodeFor, RemitError } from '../errors.js';
import { NO_HOOKS, type FaultInfo, type FaultPoint } from '../faults.js';
import { createRemit } from '../remit.js';
import { SqliteStore } from '../store/sqlite.js';
import { hooksFor, InjectedFault, parseFaultSpec } from './fault-spec.js';

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
  const store = new SqliteStore(spec.db, { synchronous: spec.synchronous ?? 'FULL', busyTimeoutMs: 10_000 });
  const remit = await createRemit({ store, workflows: [refund], core: spec.core, hooks });
  if (spec.waitForGo) {
    emit({ event: 'ready', pid: process.pid });
    await waitForGo();
  }
  try {
    const result =
      spec.action === 'start' ? await remit.start(refund, spec.input as never, { runId: spec.runId })
      : spec.action === 'resume' ? await remit.resume(spec.runId, spec.interruptId!, spec.value)
      : await remit.continueRun(spec.runId);
    emit({ event: 'result', result });
    return 0;
  } catch (error) {
    emit({ event: 'error', error: error instanceof RemitError ? error.toJSON() : { name: (error as Error).name, message: String((error as Error).message) } });
    return exitCodeFor(error);
  } finally {
    await remit.close();
  }
}

process.exitCode = await main();
