/**
 * The soak's history checker. It reads only files: the history (./history.ts), the effect sink,
 * the generated scenarios and the final read of every run. It does not import REMIT: the
 * expectation of a reference run comes from the harness's own model (harness/workflow.ts), that of
 * a generated run from the harness's own interpreter (harness/generated/model.ts).
 *
 * Properties (each counted; a soak passes when every count of violations is 0):
 *  - end states: every planned run that was started ends completed, failed or parked as its model
 *    says, with the model's state (reference: the served resume value decides the final state)
 *  - acknowledged writes: an acknowledged start leaves the run in the store; an acknowledged resume
 *    is the one the run's final state reflects; an acknowledged fork leaves its target; reads of a
 *    run never lose or rewrite a record an earlier read saw (record digests are prefixes)
 *  - effects: each effect instance applied under exactly one key (distinct applied keys per node =
 *    the model's instances); every applied key is durable as done; raw invocations of a key never
 *    exceed the EFFECT_ATTEMPT records of that key, nor 1 + the faults that could strike its window
 *    (kills of the processes that invoked it, ambiguous outcomes of operations on its run)
 *  - interrupts: at most one resumer served per park; durable claims equal the served parks
 *  - forks: the source's records unchanged by the fork; the fork ends in the model's state, never
 *    invokes an effect before the fork point, and uses its own keys
 *  - liveness: no run left unfinished when the drain's deadline passed
 *  - ambiguity: an ambiguous start/resume is allowed either way; the next read decides it and every
 *    later read agrees (the digest-prefix rule above)
 */
import fs from 'node:fs';
import { createHash as sha } from 'node:crypto';
import { expectedFinalState, type ApprovalValue, type RefundInput } from '../harness/workflow.js';
import { expectationOf, type GeneratedScenario } from '../harness/generated/generator.js';
import { sameStored } from '../harness/generated/model.js';
import { readSink, type SinkLine } from '../harness/sink.js';
import type { RunView } from '../harness/protocol.js';
import { readHistory, type CompletionLine, type InvokeLine, type RunPlanLine } from './history.js';

export const VIOLATION_KINDS = [
  'wrong-end-state',
  'lost-acknowledged-write',
  'record-lost-or-rewritten',
  'duplicate-application',
  'applied-not-durable',
  'invocations-over-attempts',
  'invocations-over-bound',
  'double-served-interrupt',
  'unserved-claim',
  'claims-mismatch',
  'fork-source-changed',
  'fork-wrong',
  'stuck-run',
] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

export interface Violation {
  kind: ViolationKind;
  run: string;
  detail: string;
}

export interface CheckResult {
  ok: boolean;
  counts: Record<ViolationKind, number>;
  violations: Violation[];
  stats: {
    runs_planned: number;
    runs_completed: number;
    runs_failed: number;
    runs_parked: number;
    operations: number;
    ok: number;
    fail: number;
    info: number;
    effect_invocations: number;
    effects_applied_distinct: number;
    effect_reinvocations: number;
    concurrent_resume_groups: number;
    forks: number;
    interrupts_served: number;
    resumes_refused: number;
  };
}

const RECORD_EFFECT_ATTEMPT = 10; // docs/log-format.md, "Record kinds"


export function checkSoak(files: { history: string; sink: string; scenarios: string; final: string }, drainUnfinished: string[]): CheckResult {
  const history = readHistory(files.history);
  const sink = readSink(files.sink).lines;
  const scenarios = new Map((JSON.parse(fs.readFileSync(files.scenarios, 'utf8')) as GeneratedScenario[]).map((s) => [s.id, s]));
  const final = JSON.parse(fs.readFileSync(files.final, 'utf8')) as Record<string, RunView>;
  const violations: Violation[] = [];
  const v = (kind: ViolationKind, run: string, detail: string) => violations.push({ kind, run, detail });

  const plans = new Map<string, RunPlanLine>();
  const invokes = new Map<number, InvokeLine>();
  const byRun = new Map<string, Array<{ invoke: InvokeLine; done: CompletionLine | null }>>();
  const killedPids = new Set<number>();
  let ok = 0, fail = 0, info = 0, operations = 0;
  for (const line of history) {
    if (line.k === 'plan') plans.set(line.plan.runId, line.plan);
    else if (line.k === 'nemesis' && line.fault === 'worker-kill' && line.pid !== undefined) killedPids.add(line.pid);
    else if (line.k === 'op' && line.type === 'invoke') {
      invokes.set(line.op_id, line);
      operations++;
      if (line.run !== undefined) {
        const list = byRun.get(line.run) ?? [];
        list.push({ invoke: line, done: null });
        byRun.set(line.run, list);
      }
    } else if (line.k === 'op') {
      line satisfies CompletionLine;
      if (line.type === 'ok') ok++;
      else if (line.type === 'fail') fail++;
      else info++;
      const inv = invokes.get(line.op_id);
      if (inv?.run !== undefined) {
        const entry = byRun.get(inv.run)?.find((e) => e.invoke.op_id === line.op_id);
        if (entry) entry.done = line;
      }
    }
  }
  // Operations that never completed in the history (the driver always writes one): ambiguous.
  const sinkByRun = new Map<string, SinkLine[]>();
  for (const l of sink) sinkByRun.set(l.run, [...(sinkByRun.get(l.run) ?? []), l]);

  let forks = 0;
  let runsCompleted = 0, runsFailed = 0, runsParked = 0, groups = 0, served = 0, refused = 0, reinvocations = 0;
  const stuck = new Set(drainUnfinished);

  for (const [runId, plan] of plans) {
    const view = final[runId];
    const ops = byRun.get(runId) ?? [];
    const completions = ops.map((e) => e.done).filter((d): d is CompletionLine => d !== null);
    if (view === undefined) {
      v('lost-acknowledged-write', runId, 'no final read of a planned run');
      continue;
    }
    if (view.status === 'completed') runsCompleted++;
    else if (view.status === 'failed') runsFailed++;
    else if (view.status === 'parked') runsParked++;
    if (stuck.has(runId)) v('stuck-run', runId, `unfinished when the drain deadline passed (final status ${view.status})`);

    // Acknowledged writes.
    const ackStart = completions.find((c) => c.op === 'start' && c.type === 'ok');
    if (ackStart && !view.exists) v('lost-acknowledged-write', runId, `start acknowledged (op ${ackStart.op_id}) but the run is absent`);
    const ackFork = completions.find((c) => c.op === 'fork' && c.type === 'ok' && c.outcome.outcome === 'forked');
    if (ackFork && !view.exists) v('lost-acknowledged-write', runId, `fork acknowledged (op ${ackFork.op_id}) but the target is absent`);
    // Reads: each later read extends every earlier one; the final read extends them all.
    const finalDigests = view.records.map((r) => r.hex);
    const reads = completions.filter((c) => c.read !== undefined).map((c) => c.read!);
    const finalShort = finalDigests.map(shortDigest);
    for (const r of reads) {
      if (r.records.length > finalShort.length || r.records.some((d, i) => d !== finalShort[i])) {
        v('record-lost-or-rewritten', runId, `a read saw ${r.records.length} records that the final read (${finalShort.length}) does not start with`);
        break;
      }
    }

    // Resumes: served per park (group by the park index at invoke: consecutive resumes between reads).
    const resumes = ops.filter((e) => e.invoke.op === 'resume');
    const servedResumes = resumes.filter((e) => e.done?.type === 'ok');
    refused += resumes.filter((e) => e.done?.type === 'fail').length;
    served += servedResumes.length;
    const groupIds = new Set(resumes.map((e) => e.invoke.group).filter((g) => g !== undefined));
    groups += groupIds.size;
    // Every resume names the park it addresses: one served resumer per park at most.
    const servedPerPark = new Map<number, number>();
    for (const e of servedResumes) {
      const park = Number(e.invoke.args?.park ?? -1);
      servedPerPark.set(park, (servedPerPark.get(park) ?? 0) + 1);
    }
    for (const [park, n] of servedPerPark) if (n > 1) v('double-served-interrupt', runId, `${n} resumers of park ${park} were served`);
    // A consumed park has exactly one served resumer, unless a resumer's outcome was ambiguous (it may be the one).
    for (let park = 0; park < view.claims; park++) {
      const mine = resumes.filter((e) => Number(e.invoke.args?.park ?? -1) === park);
      const ambiguous = mine.some((e) => e.done === null || e.done.type === 'info');
      if ((servedPerPark.get(park) ?? 0) === 0 && !ambiguous) v('unserved-claim', runId, `park ${park} is consumed but none of its ${mine.length} resumer(s) was served or ambiguous`);
    }
    if (servedResumes.length > view.claims) v('double-served-interrupt', runId, `${servedResumes.length} resumes served but ${view.claims} claims are durable`);

    // Effects.
    const lines = sinkByRun.get(runId) ?? [];
    const attempts = new Map<string, number>();
    // Normalized records have the run's ids masked as <run> (the adapter's reading); mask sink keys alike.
    const ids = plan.kind === 'fork' ? [runId, plan.source, runId] : [runId];
    const mask = (key: string) => ids.reduce((acc, id) => acc.split(id).join('<run>'), key);
    for (const rec of view.normalized as Array<{ kind?: number; key?: string }>) {
      if (rec.kind === RECORD_EFFECT_ATTEMPT && typeof rec.key === 'string') attempts.set(rec.key, (attempts.get(rec.key) ?? 0) + 1);
    }
    const ambiguousOnRun = completions.filter((c) => c.type === 'info').length;
    const keys = new Map<string, { node: string; invokes: number; applies: number; pids: Set<number> }>();
    for (const l of lines) {
      if (l.t === 'pure' || l.key === undefined) continue;
      const k = keys.get(l.key) ?? { node: l.node, invokes: 0, applies: 0, pids: new Set<number>() };
      if (l.t === 'invoke') {
        k.invokes++;
        k.pids.add(l.pid);
      } else k.applies++;
      keys.set(l.key, k);
    }
    const done = new Set(view.effectKeysDone ?? []);
    for (const [key, k] of keys) {
      if (k.applies > 0 && !done.has(key)) v('applied-not-durable', runId, `effect key ${key} applied but no EFFECT_DONE for it`);
      const a = attempts.get(mask(key)) ?? 0;
      if (k.invokes > a) v('invocations-over-attempts', runId, `key ${key}: ${k.invokes} handler invocations, ${a} EFFECT_ATTEMPT records`);
      const allowance = [...k.pids].filter((p) => killedPids.has(p)).length + ambiguousOnRun;
      if (k.invokes > 1 + allowance) v('invocations-over-bound', runId, `key ${key}: ${k.invokes} invocations, bound 1 + ${allowance}`);
      reinvocations += Math.max(0, k.invokes - 1);
    }
    const appliedKeysPerNode = new Map<string, Set<string>>();
    for (const [key, k] of keys) if (k.applies > 0) appliedKeysPerNode.set(k.node, (appliedKeysPerNode.get(k.node) ?? new Set()).add(key));

    // The model: expected end state and effect instances.
    const expected = expectationFor(plan, scenarios, servedResumes.map((e) => e.invoke.args?.value), resumes.map((e) => e.invoke.args?.value), view, final);
    if (expected.error !== null) v(expected.errorKind, runId, expected.error);
    if (expected.claims !== null && view.claims !== expected.claims && expected.error === null) v('claims-mismatch', runId, `${view.claims} durable claims, the model has ${expected.claims}`);
    if (plan.kind === 'fork') forks++;
    for (const [node, n] of Object.entries(expected.instances)) {
      const got = appliedKeysPerNode.get(node)?.size ?? 0;
      if (got > n) v('duplicate-application', runId, `${node}: applied under ${got} keys, the model has ${n} instance(s)`);
      else if (got < n && view.status === 'completed') v('wrong-end-state', runId, `${node}: applied under ${got} keys, the model has ${n}`);
    }
    if (plan.kind === 'fork') {
      const src = final[plan.source];
      const before = (byRun.get(plan.source) ?? []).map((e) => e.done).filter((d): d is CompletionLine => d?.read !== undefined && d.read.status === 'completed').map((d) => d.read!)[0];
      if (src === undefined || before === undefined) v('fork-wrong', runId, 'source not read before and after the fork');
      else if (src.records.length !== before.records.length || src.records.some((r, i) => shortDigest(r.hex) !== before.records[i])) v('fork-source-changed', runId, `source ${plan.source}'s records changed after the fork`);
      if (lines.some((l) => l.node === 'charge' && l.t !== 'pure')) v('fork-wrong', runId, 'the fork invoked charge, an effect before its fork point');
      const srcKeys = new Set((sinkByRun.get(plan.source) ?? []).map((l) => l.key));
      if ([...keys.keys()].some((k) => srcKeys.has(k))) v('fork-wrong', runId, 'the fork reused an effect key of its source');
    }
  }
  for (const run of stuck) if (!plans.has(run)) v('stuck-run', run, 'unfinished at the deadline');

  const counts = Object.fromEntries(VIOLATION_KINDS.map((k) => [k, violations.filter((x) => x.kind === k).length])) as Record<ViolationKind, number>;
  return {
    ok: violations.length === 0,
    counts,
    violations,
    stats: {
      runs_planned: plans.size,
      runs_completed: runsCompleted,
      runs_failed: runsFailed,
      runs_parked: runsParked,
      operations,
      ok,
      fail,
      info,
      effect_invocations: sink.filter((l) => l.t === 'invoke').length,
      effects_applied_distinct: new Set(sink.filter((l) => l.t === 'apply').map((l) => l.key)).size,
      effect_reinvocations: reinvocations,
      concurrent_resume_groups: groups,
      forks,
      interrupts_served: served,
      resumes_refused: refused,
    },
  };
}

function shortDigest(hex: string): string {
  return sha('sha256').update(hex).digest('hex').slice(0, 16);
}

interface Expected {
  instances: Record<string, number>;
  /** Durable resume claims the model has at the end (null: not decided here). */
  claims: number | null;
  error: string | null;
  errorKind: ViolationKind;
}

function eq(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The model's end state for one run, compared with the final read. */
function expectationFor(plan: RunPlanLine, scenarios: Map<string, GeneratedScenario>, servedValues: unknown[], triedValues: unknown[], view: RunView, final: Record<string, RunView>): Expected {
  const wrong = (error: string): Expected => ({ instances: {}, claims: null, error, errorKind: 'wrong-end-state' });
  if (plan.kind === 'generated') {
    const s = scenarios.get(plan.scenario);
    if (s === undefined) return wrong(`no scenario ${plan.scenario}`);
    const e = expectationOf(s);
    const out: Expected = { instances: e.effectInstances, claims: e.claims, error: null, errorKind: 'wrong-end-state' };
    if (e.final.kind !== view.status) return { ...out, error: `final status ${view.status}, the model says ${e.final.kind}` };
    if (!sameStored(view.headState, e.headState)) return { ...out, error: 'head state differs from the model' };
    if (!eq(view.completedNodes, e.completedNodes)) return { ...out, error: `path ${view.completedNodes.join(',')} differs from the model's ${e.completedNodes.join(',')}` };
    return out;
  }
  const input = plan.input as RefundInput;
  const parkedState = afterCharge(input);
  if (plan.kind === 'reference' && plan.leaveParked) {
    const out: Expected = { instances: { charge: 1, notify: 0 }, claims: 0, error: null, errorKind: 'wrong-end-state' };
    if (view.status !== 'parked') return { ...out, error: `left parked by plan, final status ${view.status}` };
    if (!eq(view.headState, parkedState)) return { ...out, error: 'parked state differs from the model' };
    return out;
  }
  const instances = plan.kind === 'fork' ? { charge: 0, notify: 1 } : { charge: 1, notify: 1 };
  const out: Expected = { instances, claims: 1, error: null, errorKind: plan.kind === 'fork' ? 'fork-wrong' : 'wrong-end-state' };
  if (view.status !== 'completed') return { ...out, error: `final status ${view.status}, the model says completed` };
  // The served resumer's value decides; if no reply said served (all ambiguous), one of the values tried.
  const candidates = (servedValues.length > 0 ? servedValues : triedValues) as ApprovalValue[];
  const matches = candidates.some((value) => eq(view.headState, expectedFinalState(input, value)));
  if (!matches) return { ...out, error: `final state ${JSON.stringify(view.headState)} is not the model's for the ${servedValues.length > 0 ? 'served' : 'tried'} value(s)` };
  if (servedValues.length > 0 && !eq(view.headState, expectedFinalState(input, servedValues[servedValues.length - 1] as ApprovalValue)))
    return { ...out, error: 'final state is not that of the served resume', errorKind: 'lost-acknowledged-write' };
  void final;
  return out;
}

/** The reference workflow's state while parked at approval (compute and charge done). */
function afterCharge(input: RefundInput): unknown {
  const full = expectedFinalState(input, { approved: true, note: '' });
  return { ...full, decision: null, notificationId: null, visited: full.visited.slice(0, 2) };
}
