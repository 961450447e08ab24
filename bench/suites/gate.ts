/**
 * Suite 4, the consume-once gate: claims resolved per second when k racers (k = 1, 2, 8) try to
 * resume the same parked interrupt, against the limit: a raw INSERT ... ON CONFLICT DO NOTHING
 * RETURNING per racer. Racers are separate connections to one SQLite file (synchronous=FULL) in
 * this process, started together (Promise.all); a claim is resolved when every racer has its
 * answer. Every sample checks that exactly one racer won each claim.
 *
 * Three REMIT rows: `remit:resume` is the public resume() (validate the value, recover, admit,
 * conditional append of RESUME_CLAIMED, then the winner drives the run to its end: one more
 * commit); `remit:claim-only` is the gate alone as a process that has not opened the run makes it
 * (read the log, core.feed from the empty summary, core.admitFrom, conditional append);
 * `remit:claim-held` is the claim from the state that read left (core.admitFrom, conditional
 * append, a loser's catch-up on the records in the way): the claim resume() makes after it has read
 * the run to judge the interrupt and the value, and what the targets read (bench/README.md, "Gate").
 * The parked runs a sample consumes, and the held rows' reads, are made before its clock starts.
 */

import type { RecoveryCore } from 'remit/core';
import { claimFromHeld, claimOnce, readEveryRacer, type Held } from '../workloads/claim.js';
import type { Remit, Store } from 'remit';
import { compareTasks, warmUpNote, type TimedTask } from '../lib/measure.js';
import { freshDbPath, type SuiteContext, type SuiteOutput } from '../lib/context.js';
import { row, unavailableRow, type ResultRow } from '../lib/results.js';
import { runPostgresGateSuite } from '../postgres.js';
import { scaleSummary } from '../lib/stats.js';
import { openRawDb, rawClaimGate } from '../workloads/raw-sqlite.js';
import { RESUME_VALUE } from '../workloads/shapes.js';

const RAW = 'raw-on-conflict';
/** The parked runs of the gate suite have one `work` step before the interrupt. */
const GATE_NODES = 1;

type RemitMod = typeof import('../workloads/remit.js');

export async function runGate(ctx: SuiteContext): Promise<SuiteOutput> {
  const { claims, racers: racerCounts, samples } = ctx.profile.gate;
  const rows: ResultRow[] = [];
  const notes: string[] = [];
  let mod: RemitMod | null = null;
  try {
    mod = await import('../workloads/remit.js');
    notes.push((await mod.remitCore()).note);
  } catch (e) {
    notes.push(`REMIT unavailable: ${String((e as Error)?.message ?? e).slice(0, 200)}`);
  }
  const { openSqliteStore } = await import('remit');
  for (const k of racerCounts) {
    const caseName = `k=${k}`;
    const params = { racers: k, claims_per_sample: claims };
    const tasks: TimedTask[] = [];
    const closers: (() => Promise<void> | void)[] = [];
    if (mod) {
      const file = freshDbPath(ctx.tmpDir, `remit-gate-k${k}.db`);
      const wf = mod.parkedWorkflow(GATE_NODES);
      // Parked runs are created over a NORMAL connection (untimed set-up); racers use FULL.
      const preparer = await mod.remitOpen(file, wf, 'NORMAL');
      const racers: Remit[] = [];
      for (let i = 0; i < k; i++) racers.push(await mod.remitOpen(file, wf, 'FULL'));
      const stores: Store[] = [];
      for (let i = 0; i < k; i++) stores.push(openSqliteStore(file, { synchronous: 'FULL' }));
      const { core } = await mod.remitCore();
      closers.push(() => preparer.close(), ...racers.map((r) => () => r.close()), ...stores.map((s) => () => s.close()));
      let batchNo = 0;
      const prepared: string[][] = [];
      const prepareBatch = async () => {
        const ids: string[] = [];
        for (let c = 0; c < claims; c++) {
          const runId = `gate-k${k}-${batchNo}-${c}`;
          await mod!.remitPrepareParked(file, GATE_NODES, runId, preparer);
          ids.push(runId);
        }
        batchNo++;
        prepared.push(ids);
      };
      const interruptId = mod.parkedInterruptId(GATE_NODES);
      tasks.push({
        impl: 'remit:resume', async: true,
        fn: async () => {
          await prepareBatch();
          return { overriddenDuration: await timed(() => resolveWithResume(racers, prepared.shift()!, interruptId)) };
        },
      });
      tasks.push({
        impl: 'remit:claim-only', async: true,
        fn: async () => {
          await prepareBatch();
          return { overriddenDuration: await timed(() => resolveWithClaimOnly(stores, core, prepared.shift()!, interruptId)) };
        },
      });
      tasks.push({
        impl: 'remit:claim-held', async: true,
        fn: async () => {
          await prepareBatch();
          const runIds = prepared.shift()!;
          const held = await readEveryRacer(stores, core, runIds);
          return { overriddenDuration: await timed(() => resolveWithClaimHeld(stores, core, runIds, held, interruptId)) };
        },
      });
    }
    const rawFile = freshDbPath(ctx.tmpDir, `raw-gate-k${k}.db`);
    const rawDbs = Array.from({ length: k }, () => openRawDb(rawFile, 'FULL'));
    closers.push(...rawDbs.map((d) => () => { d.close(); }));
    const value = new TextEncoder().encode(JSON.stringify(RESUME_VALUE));
    let rawBatch = 0;
    tasks.push({
      impl: RAW,
      fn: () => {
        const winners = rawClaimGate(rawDbs, `raw-${rawBatch++}`, claims, value);
        if (winners !== claims) throw new Error(`raw gate: ${winners} winners for ${claims} claims`);
        return winners;
      },
    });
    ctx.log(`gate: ${caseName}, ${samples} samples of ${claims} claims`);
    const outcomes = await compareTasks(`gate ${caseName}`, tasks, { iterations: 1, timeMs: 0, warmupIterations: 1, rounds: samples });
    for (const close of closers) await close();
    notes.push(warmUpNote(caseName, outcomes, claims, 'claim'));
    const caseRows = outcomes.map((o) => {
      if (!o.time_ms) return row({ suite: 'gate', case: caseName, params, impl: o.impl, role: 'subject', status: 'error', note: o.error });
      const perClaim = scaleSummary(o.time_ms, 1 / claims);
      return row({
        suite: 'gate', case: caseName, params, impl: o.impl, role: o.impl === RAW ? 'limit' : 'subject', time_ms: perClaim,
        metrics: { claims_per_s: 1000 / perClaim.median },
      });
    });
    if (!mod) caseRows.push(unavailableRow('gate', caseName, params, 'remit', 'subject', 'REMIT workload did not load'));
    const raw = caseRows.find((r) => r.impl === RAW && r.status === 'measured');
    for (const r of caseRows) {
      if (r.impl !== RAW && r.time_ms && raw?.time_ms) r.ratios[`speed_vs_${RAW}`] = raw.time_ms.median / r.time_ms.median;
    }
    rows.push(...caseRows);
  }
  if (ctx.pgUrl) {
    const pg = await runPostgresGateSuite(ctx);
    rows.push(...pg.rows);
    notes.push(...pg.notes);
  }
  notes.push(
    `One sample = ${claims} interrupts, each raced by k connections; times are per claim. Exactly one winner per claim is checked in every sample (a wrong count fails the row).`,
    'Racers share one Node thread: better-sqlite3 is synchronous, so they interleave at await points (REMIT) or statement by statement (raw). Cross-process and cross-host racing is the conformance harness\'s concurrency matrix, not this suite.',
  );
  return { rows, notes, charts: [] };
}

async function timed(op: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await op();
  return performance.now() - t0;
}

async function resolveWithResume(racers: Remit[], runIds: string[], interruptId: string): Promise<void> {
  for (const runId of runIds) {
    const outcomes = await Promise.allSettled(racers.map((r) => r.resume(runId, interruptId, RESUME_VALUE)));
    expectOneWinner(outcomes.map((o) => o.status === 'fulfilled'), outcomes, runId);
  }
}

async function resolveWithClaimOnly(stores: Store[], core: RecoveryCore, runIds: string[], interruptId: string): Promise<void> {
  const id = new TextEncoder().encode(interruptId);
  const value = new TextEncoder().encode(JSON.stringify(RESUME_VALUE));
  for (const runId of runIds) {
    const won = await Promise.all(stores.map((s) => claimOnce(s, core, runId, id, value)));
    expectOneWinner(won, won, runId);
  }
}

async function resolveWithClaimHeld(stores: Store[], core: RecoveryCore, runIds: string[], held: Held[][], interruptId: string): Promise<void> {
  const id = new TextEncoder().encode(interruptId);
  const value = new TextEncoder().encode(JSON.stringify(RESUME_VALUE));
  for (let i = 0; i < runIds.length; i++) {
    const won = await Promise.all(stores.map((s, r) => claimFromHeld(s, core, runIds[i]!, held[i]![r]!, id, value)));
    expectOneWinner(won, won, runIds[i]!);
  }
}

function expectOneWinner(won: boolean[], detail: unknown[], runId: string): void {
  const winners = won.filter(Boolean).length;
  if (winners !== 1) {
    const why = detail.map((d) => String((d as { reason?: Error })?.reason?.message ?? d)).join('; ').slice(0, 300);
    throw new Error(`run ${runId}: ${winners} racers won (${why})`);
  }
}
