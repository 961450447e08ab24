/**
 * One process, one instance id (the pod name), a store per tenant: a run id is a business id
 * (order-1042), so two tenants' stores may each hold a run of that id at the same effect, with the
 * same idempotency key. The in-process registry of running calls keyed calls by instance, run id
 * and key only, so before, tenant B's start met tenant A's running call as if it were its own: it
 * called nothing and resolved `running`, and no sequencer drove the run until the next recoverAll.
 * Two handles on one store must still share entries: there a second call must not call again.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EffectInFlightError } from '../errors.js';
import { createRemit, END, openSqliteStore, workflow } from '../index.js';

const root = mkdtempSync(join(tmpdir(), 'remit-fence-stores-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function orders(calls: string[], gate: Promise<void>) {
  return workflow({ name: 'order', version: '1', state: z.object({ tenant: z.string() }) })
    .effect('charge', {
      run: async (s, { idempotencyKey }) => {
        calls.push(`${s.tenant}:${idempotencyKey}`);
        if (s.tenant === 'a') await gate;
        return { charged: s.tenant };
      },
      next: END,
    })
    .build();
}

async function whileAChargesRun<T>(body: (ctx: { calls: string[]; wf: ReturnType<typeof orders>; dbA: string; case_: string }) => Promise<T>, case_: string) {
  let open!: () => void;
  const calls: string[] = [];
  const wf = orders(calls, new Promise<void>((resolve) => (open = resolve)));
  const dbA = join(root, `${case_}-a.db`);
  const a = await createRemit({ store: openSqliteStore(dbA), workflows: [wf], instanceId: 'pod-1' });
  const charging = a.start(wf, { tenant: 'a' }, { runId: 'order-1042' });
  while (calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
  try {
    return { result: await body({ calls, wf, dbA, case_ }), calls };
  } finally {
    open();
    expect((await charging).status).toBe('completed');
    await a.close();
  }
}

describe('one instance id, a store per tenant, one run id in both', () => {
  it("tenant B's run is driven while tenant A's call of the same key runs", async () => {
    const { result, calls } = await whileAChargesRun(async ({ wf, case_ }) => {
      const b = await createRemit({ store: openSqliteStore(join(root, `${case_}-b.db`)), workflows: [wf], instanceId: 'pod-1' });
      const started = await b.start(wf, { tenant: 'b' }, { runId: 'order-1042' });
      await b.close();
      return started;
    }, 'tenants');
    expect(result.status).toBe('completed');
    expect(calls).toEqual(['a:order-1042/charge/1', 'b:order-1042/charge/1']);
  });

  it("a second handle on tenant A's store still waits for A's running call", async () => {
    const { result, calls } = await whileAChargesRun(async ({ wf, dbA }) => {
      const again = await createRemit({ store: openSqliteStore(dbA), workflows: [wf], instanceId: 'pod-1', effectLeaseMs: 1 });
      await new Promise((resolve) => setTimeout(resolve, 5)); // A's lease would have expired
      const outcome = await again.continueRun('order-1042').catch((e: unknown) => e);
      await again.close();
      return outcome;
    }, 'handles');
    expect(result).toBeInstanceOf(EffectInFlightError);
    expect(calls).toEqual(['a:order-1042/charge/1']);
  });
});
