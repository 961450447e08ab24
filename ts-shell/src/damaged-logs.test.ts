/**
 * Damaged logs are reported the same way everywhere (docs/guide.md, "Damaged runs"): status,
 * continueRun, inspect, runs, scrub, recoverAll and the rendered inspection agree on a torn or empty last
 * record and on a checksum failure, name the run and the seq, and say what the operator can do.
 * `repair` removes a damaged last record only when losing it is the same as a crash before it was
 * written, and refuses otherwise. Runs on the memory and SQLite stores (the damage is made by
 * writing the stored rows directly, as a disk or an operator would).
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sinkDeps } from '../../examples/refund/deps.js';
import { createRefundWorkflow } from '../../examples/refund/workflow.js';
import { createCore } from './core/index.js';
import { renderInspection } from './inspect.js';
import { Remit } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { SqliteStore } from './store/sqlite.js';
import type { Store } from './store/store.js';
import { MemoryEffectSink } from './testing/effect-sink.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const input = { orderId: 'o-1', customerEmail: 'ada@example.com', amountCents: 2_000, reason: 'damaged' as const };
const approval = { approved: true, approver: 'kim' };
const dir = mkdtempSync(join(tmpdir(), 'remit-damage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The same store without `listRunsToRecover`, as a custom store would be: recoverAll reads every run. */
function withoutRecoveryIndex(store: Store): Store {
  return Object.assign(Object.create(store) as Store, { listRunsToRecover: undefined, correctRunStatuses: undefined });
}

type Damage = (bytes: Uint8Array) => Uint8Array;
const tear: Damage = (b) => b.slice(0, Math.max(1, Math.floor(b.length / 2)));
const tearHeader: Damage = (b) => b.slice(0, 7);
const empty: Damage = () => new Uint8Array();
const flip: Damage = (b) => {
  const out = b.slice();
  out[Math.floor(out.length / 2)]! ^= 0x10;
  return out;
};

interface Target {
  name: string;
  open(): Store;
  /** Replace the stored bytes of record `seq` of `runId`. */
  damage(store: Store, runId: string, seq: number, how: Damage): void;
}

const targets: Target[] = [
  {
    name: 'memory',
    open: () => new MemoryStore(),
    damage(store, runId, seq, how) {
      const record = (store as MemoryStore).backing.runs.get(runId)!.records[seq]!;
      record.bytes = how(record.bytes);
    },
  },
  {
    name: 'sqlite',
    open: () => new SqliteStore(join(dir, `${Math.random().toString(36).slice(2)}.db`)),
    damage(store, runId, seq, how) {
      const db = new Database((store as SqliteStore).path);
      const row = db.prepare('SELECT bytes FROM remit_records WHERE run_id = ? AND seq = ?').get(runId, seq) as { bytes: Buffer };
      db.prepare('UPDATE remit_records SET bytes = ? WHERE run_id = ? AND seq = ?').run(Buffer.from(how(new Uint8Array(row.bytes))), runId, seq);
      db.close();
    },
  },
];

for (const target of targets) {
  describe(`damaged runs on the ${target.name} store`, () => {
    function setup() {
      const sink = new MemoryEffectSink();
      const refund = createRefundWorkflow(sinkDeps(sink));
      const store = target.open();
      return { sink, refund, store, remit: new Remit(store, core, [refund]) };
    }

    /** A run parked at managerApproval@6, with its last record (INTERRUPT_PARKED, seq 5) damaged. */
    async function parkedThenDamaged(how: Damage) {
      const s = setup();
      await s.remit.start(s.refund, input, { runId: 'd' });
      target.damage(s.store, 'd', 6, how);
      return s;
    }

    for (const [label, how, code] of [
      ['a torn last record', tear, 'REMIT_LOG_TORN'],
      ['a last record torn inside its header', tearHeader, 'REMIT_LOG_TORN'],
      ['an empty last record', empty, 'REMIT_LOG_TORN'],
      ['a checksum failure in the last record', flip, 'REMIT_LOG_CORRUPT'],
    ] as const) {
      it(`${label}: every view names run d and seq 6 and says what to do; none says running`, async () => {
        const { store, remit, refund } = await parkedThenDamaged(how);
        const expected = { code, runId: 'd', seq: 6 };
        const statusError = await remit.status('d').catch((e) => e);
        expect(statusError).toMatchObject(expected);
        expect(String(statusError.message)).toMatch(code === 'REMIT_LOG_TORN' ? /remit repair d/ : /backup/);
        await expect(remit.continueRun('d')).rejects.toMatchObject(expected);
        await expect(remit.resume('d', 'managerApproval@6', approval)).rejects.toMatchObject(expected);
        const inspection = await remit.inspect('d');
        expect(inspection.status).toBe('damaged');
        expect(inspection.damage).toMatchObject({ seq: 6, repairable: code === 'REMIT_LOG_TORN' });
        // Record 0 is intact: the inspection names the run's workflow, as runs() does, whatever the damage after it.
        expect(inspection).toMatchObject({ workflow: 'refund', version: refund.version, fingerprint: refund.fingerprintHex });
        const text = renderInspection(inspection);
        expect(text).toMatch(/status damaged/);
        expect(text).toMatch(/^run d {2}workflow refund v/);
        expect(text).toMatch(/DAMAGED.*seq 6/);
        expect(text).toMatch(code === 'REMIT_LOG_TORN' ? /remit repair d/ : /backup/);
        const listed = (await remit.runs()).find((r) => r.runId === 'd');
        expect(listed).toMatchObject({ status: 'damaged', workflow: 'refund', damage: { seq: 6 } });
        expect((await remit.scrub('d')).damage).toMatchObject({ seq: 6 });
        // The run was parked when it was damaged at rest: its status hint keeps it out of the
        // recovery candidates, so recoverAll does not read it (runs and scrub do, above). Reading
        // every run (a store without the hint), recoverAll reports it with its typed error.
        expect(await remit.recoverAll()).toEqual([]);
        const fullScan = new Remit(withoutRecoveryIndex(store), core, [remit.workflowNamed('refund')!]);
        expect(await fullScan.recoverAll()).toEqual([{ runId: 'd', error: expect.objectContaining(expected) }]);
        await store.close();
      });
    }

    it('repair on a store without removeLastRecord refuses (RepairRefusedError naming it, as docs/errors.md says) and changes nothing', async () => {
      const { store, remit, refund } = await parkedThenDamaged(tear);
      const before = await store.readRecords('d');
      const withoutRemoval = Object.assign(Object.create(store) as Store, { removeLastRecord: undefined });
      const refused = await new Remit(withoutRemoval, core, [refund]).repair('d').catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'REMIT_REPAIR_REFUSED', runId: 'd', seq: 6, why: expect.stringMatching(/no removeLastRecord/) });
      expect(await store.readRecords('d')).toEqual(before);
      const row = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8').split('\n').find((line) => line.startsWith('| `REMIT_REPAIR_REFUSED` |'))!;
      expect(row).toContain('without `removeLastRecord`');
      expect((await remit.repair('d')).removedSeq).toBe(6);
      await store.close();
    });

    it('repair removes a torn INTERRUPT_PARKED (same as a crash before it); the run parks again and completes', async () => {
      const { sink, store, remit } = await parkedThenDamaged(tear);
      const repaired = await remit.repair('d');
      expect(repaired).toMatchObject({ runId: 'd', removedSeq: 6, removedKind: 'INTERRUPT_PARKED', headSeq: 5 });
      const parked = await remit.continueRun('d');
      expect(parked).toMatchObject({ status: 'parked', interrupt: { id: 'managerApproval@6' } });
      expect((await remit.resume('d', 'managerApproval@6', approval)).status).toBe('completed');
      expect((await sink.counts()).byEffect['chargeCard']).toEqual({ invocations: 1, applied: 1 });
      await store.close();
    });

    it('repair removes an empty last record whose kind it infers from the log (a park), then the run goes on', async () => {
      const { store, remit } = await parkedThenDamaged(empty);
      expect(await remit.repair('d')).toMatchObject({ removedSeq: 6, removedKind: null });
      expect((await remit.continueRun('d')).status).toBe('parked');
      await store.close();
    });

    it('repair refuses a checksum failure: the record was complete, its content matters', async () => {
      const { store, remit } = await parkedThenDamaged(flip);
      const before = await store.readRecords('d');
      await expect(remit.repair('d')).rejects.toMatchObject({ code: 'REMIT_REPAIR_REFUSED', runId: 'd', seq: 6 });
      expect(await store.readRecords('d')).toEqual(before);
      await store.close();
    });

    it('repair refuses a torn or empty RESUME_CLAIMED: removing it could let a second resume in', async () => {
      for (const how of [tear, empty]) {
        const s = setup();
        const stopAfterClaim = new Remit(s.store, core, [s.refund], {
          at: (point) => {
            if (point === 'resume.after-claim') throw new Error('stop after the claim');
          },
        });
        await s.remit.start(s.refund, input, { runId: 'c' });
        await expect(stopAfterClaim.resume('c', 'managerApproval@6', approval)).rejects.toThrow('stop after the claim');
        target.damage(s.store, 'c', 7, how);
        const before = await s.store.readRecords('c');
        await expect(s.remit.repair('c')).rejects.toMatchObject({ code: 'REMIT_REPAIR_REFUSED', runId: 'c', seq: 7 });
        expect(await s.store.readRecords('c')).toEqual(before);
        await s.store.close();
      }
    });

    it('repair refuses a torn FORKED record: the fork would continue under its source\'s id', async () => {
      const s = setup();
      const parked = await s.remit.start(s.refund, input, { runId: 'src' });
      await s.remit.resume('src', parked.interrupt!.id, approval);
      await s.remit.fork('src', 5, { newRunId: 'fk' });
      target.damage(s.store, 'fk', 6, tearHeader);
      await expect(s.remit.status('fk')).rejects.toMatchObject({ code: 'REMIT_LOG_TORN', runId: 'fk', seq: 6 });
      await expect(s.remit.repair('fk')).rejects.toMatchObject({ code: 'REMIT_REPAIR_REFUSED', runId: 'fk', seq: 6 });
      await s.store.close();
    });

    it('repair of a healthy run changes nothing', async () => {
      const s = setup();
      await s.remit.start(s.refund, input, { runId: 'ok' });
      const before = await s.store.readRecords('ok');
      expect(await s.remit.repair('ok')).toMatchObject({ runId: 'ok', removedSeq: null, headSeq: 6 });
      expect(await s.store.readRecords('ok')).toEqual(before);
      await s.store.close();
    });

    it('repair refuses a torn EFFECT_ATTEMPT: its owner may still be calling the handler', async () => {
      const s = setup();
      const stopBeforeHandler = new Remit(s.store, core, [s.refund], {
        at: (point) => {
          if (point === 'effect.before-handler') throw new Error('stop before the handler');
        },
      });
      await expect(stopBeforeHandler.start(s.refund, input, { runId: 'a' })).rejects.toThrow('stop before the handler');
      const rows = await s.store.readRecords('a');
      expect(rows.length).toBe(4); // RUN_STARTED, NODE_COMPLETED, EFFECT_INTENT, EFFECT_ATTEMPT
      target.damage(s.store, 'a', 3, tear);
      const before = await s.store.readRecords('a');
      await expect(s.remit.repair('a')).rejects.toMatchObject({ code: 'REMIT_REPAIR_REFUSED', runId: 'a', seq: 3 });
      expect(await s.store.readRecords('a')).toEqual(before);
      await s.store.close();
    });

    it('repair removes a torn EFFECT_RELEASED (the attempt stays live until its lease expires, as after a crash)', async () => {
      const store = target.open();
      let calls = 0;
      const flaky = workflow({ name: 'flaky', version: '1', state: z.object({ done: z.boolean() }) })
        .effect('call', {
          run: () => {
            calls += 1;
            if (calls === 1) throw new Error('the provider is down');
            return { ok: true };
          },
          apply: () => ({ done: true }),
          next: END,
        })
        .build();
      const remit = new Remit(store, core, [flaky]);
      await expect(remit.start(flaky, { done: false }, { runId: 'r' })).rejects.toMatchObject({ code: 'REMIT_HANDLER_THREW' });
      const rows = await store.readRecords('r');
      expect(rows.length).toBe(4); // RUN_STARTED, EFFECT_INTENT, EFFECT_ATTEMPT, EFFECT_RELEASED
      target.damage(store, 'r', 3, tear);
      expect(await remit.repair('r')).toMatchObject({ runId: 'r', removedSeq: 3, removedKind: 'EFFECT_RELEASED', headSeq: 2 });
      expect((await store.readRecords('r')).length).toBe(3);
      await store.close();
    });
  });
}
