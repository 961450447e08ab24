// A TypeScript service's view of the published types: compiled with strict, skipLibCheck false and
// no @types packages (scripts/consumer-test.sh). It is type-checked, never run. lib DOM is there
// for zod, whose declarations name the URL type, and for remit/core's Wasm loader, which does too.
import { z } from 'zod';
import {
  AlreadyConsumedError, createRemit, END, ErrorCode, LogTornError, openMemoryStore, openSqliteStore, RemitError, RepairRefusedError,
  ValueUnfaithfulError, workflow, type Remit, type RepairResult, type RunDamage, type RunResult, type Store,
} from 'remit';
import { createCore, type RecoveryCore } from 'remit/core';
import { openPostgresStore, type PostgresStoreOptions } from 'remit/postgres';
import { FileEffectSink, hooksFor, parseFaultSpec } from 'remit/testing';

const Approval = z.object({ approved: z.boolean(), approver: z.string() });

export const refund = workflow({ name: 'refund', version: '1', state: z.object({ amountCents: z.number().int(), chargeId: z.string().optional(), approved: z.boolean().optional() }) })
  .effect('charge', {
    run: async (s, { idempotencyKey }) => ({ chargeId: `${idempotencyKey}:${s.amountCents}` }),
    apply: (_s, receipt) => ({ chargeId: receipt.chargeId }),
    next: 'approval',
  })
  .interrupt('approval', { resume: Approval, apply: (_s, v) => ({ approved: v.approved }), next: END })
  .build();

export async function service(path: string): Promise<RunResult> {
  const store: Store = path === ':memory:' ? openMemoryStore() : openSqliteStore(path, { synchronous: 'FULL' });
  const remit: Remit = await createRemit({ store, workflows: [refund] });
  const run = await remit.start(refund, { amountCents: 1250 }, { runId: 'order-1' });
  const amount: number = run.state.amountCents;
  if (run.status === 'parked' && run.interrupt && amount > 0) {
    try {
      return await remit.resume(run.runId, run.interrupt.id, { approved: true, approver: 'kim' });
    } catch (error) {
      if (error instanceof AlreadyConsumedError) return remit.status(run.runId);
      if (error instanceof RemitError && error.code === ErrorCode.CONFLICT) return remit.status(run.runId);
      throw error;
    }
  }
  return run;
}

export async function coreAndPostgres(options: PostgresStoreOptions): Promise<RecoveryCore> {
  const store = await openPostgresStore({ ...options, schema: 'remit' });
  await store.close();
  // pg takes a password function (a rotating IAM token): the pool settings' type must too.
  void openPostgresStore({ connectionString: 'postgres://app@db/app', pool: { password: async () => 'token' } });
  const hooks = hooksFor(parseFaultSpec('effect.after-handler@charge'), () => undefined);
  void hooks;
  void new FileEffectSink('/tmp/sink');
  return createCore('reference');
}

/** A switch over RunResult's status handles the guide's four statuses, and the compiler knows there is no other. */
export function describe(run: RunResult): string {
  switch (run.status) {
    case 'parked': return `parked at ${run.interrupt.id}`;
    case 'failed': return `failed: ${run.failure.code}`;
    case 'completed': return 'completed';
    case 'running': return 'running elsewhere';
    default: { const none: never = run; return none; }
  }
}

/** Start-up: recover what a crash interrupted, repair a torn tail when that is safe, report the rest. */
export async function startUp(remit: Remit): Promise<Array<RepairResult | RunDamage>> {
  const out: Array<RepairResult | RunDamage> = [];
  for (const outcome of await remit.recoverAll()) {
    if (!('error' in outcome)) continue;
    if (outcome.error instanceof LogTornError) {
      try {
        out.push(await remit.repair(outcome.runId));
      } catch (error) {
        if (!(error instanceof RepairRefusedError)) throw error;
      }
    } else if (outcome.error instanceof ValueUnfaithfulError && outcome.error.reason === 'CHANGED_BY_JSON') {
      throw outcome.error;
    }
  }
  for (const run of await remit.runs()) if (run.damage) out.push(run.damage);
  return out;
}
