/**
 * The smoke soak: 60 s of REMIT on SQLite with 4 local worker processes, SIGKILLed by the nemesis
 * and restarted (each restart calls recoverAll), then the independent checker. Fails on any
 * violation. Then the checker is shown able to fail: on the canary (workers whose store reports a
 * lost conditional append as committed, so two resumers of one park are both served), and on the
 * smoke's own files with one fact changed at a time.
 *
 * SQLite and local processes only: no network namespaces, no PostgreSQL port (the PostgreSQL soak,
 * with server kills and link faults on hosts, is `npm run soak`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSoak, VIOLATION_KINDS } from './checker.js';
import { readHistory } from './history.js';
import { planPhase } from './nemesis.js';
import { postgresPhases, soakStore, sqlitePhases } from './soak.js';
import type { StoreReport } from './report.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'remit-soak-test-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let smoke: StoreReport | null = null;

describe('soak (SQLite, 4 local workers, worker SIGKILL)', () => {
  it('60 s under the nemesis: every checker count is 0', { timeout: 240_000 }, async () => {
    smoke = await soakStore({
      store: 'sqlite',
      workers: 4,
      seed: 7,
      phases: [
        { name: 'quiet', fault: null, duration_ms: 10_000 },
        { name: 'worker-kill', fault: 'worker-kill', duration_ms: 40_000 },
        { name: 'quiet-after', fault: null, duration_ms: 10_000 },
      ],
      maxOps: 100_000,
      outDir: path.join(dir, 'smoke'),
      command: 'npx vitest run conformance/soak/soak.test.ts',
    });
    expect(smoke.status).toBe('run');
    const check = smoke.check!;
    expect(check.violations.slice(0, 5)).toEqual([]);
    for (const k of VIOLATION_KINDS) expect(check.counts[k], k).toBe(0);
    // The nemesis did strike, workers came back through recoverAll, and the load was real.
    expect(smoke.figures!.faults_injected['worker-kill'] ?? 0).toBeGreaterThanOrEqual(5);
    expect(smoke.figures!.worker_restarts).toBeGreaterThanOrEqual(5);
    const history = readHistory(path.join(dir, 'smoke', 'history.jsonl'));
    expect(history.filter((l) => l.k === 'op' && l.type === 'ok' && l.op === 'recoverAll').length).toBeGreaterThanOrEqual(5);
    expect(check.stats.operations).toBeGreaterThan(500);
    expect(check.stats.concurrent_resume_groups).toBeGreaterThan(10);
    expect(check.stats.runs_completed).toBeGreaterThan(100);
    expect(check.stats.info).toBeGreaterThan(0); // ambiguous outcomes (killed mid-request) happened and were settled
  });

  it('the checker catches the canary: a lost claim reported as committed serves two resumers', { timeout: 180_000 }, async () => {
    const canary = await soakStore({
      store: 'sqlite',
      workers: 4,
      seed: 7,
      phases: [{ name: 'quiet', fault: null, duration_ms: 12_000 }],
      maxOps: 100_000,
      outDir: path.join(dir, 'canary'),
      canary: 'lost-append-reported-committed',
      command: 'npx vitest run conformance/soak/soak.test.ts',
    });
    expect(canary.check!.ok).toBe(false);
    expect(canary.check!.counts['double-served-interrupt']).toBeGreaterThan(0);
  });

  it('the checker fails on each fact changed in the smoke soak’s files', () => {
    expect(smoke?.check?.ok).toBe(true);
    const src = path.join(dir, 'smoke');
    const files = (d: string) => ({ history: path.join(d, 'history.jsonl'), sink: path.join(d, 'sink.jsonl'), scenarios: path.join(d, 'scenarios.json'), final: path.join(d, 'final.json') });
    const final = JSON.parse(fs.readFileSync(files(src).final, 'utf8')) as Record<string, { status: string; headState: unknown; exists: boolean }>;
    const completed = Object.keys(final).find((id) => id.startsWith('r-') && !id.endsWith('-fork') && final[id]!.status === 'completed')!;
    const sink = fs.readFileSync(files(src).sink, 'utf8').split('\n').filter((l) => l.length > 0);
    const invoke = sink.find((l) => l.includes(`"run":"${completed}"`) && l.includes('"t":"invoke"'))!;
    const apply = sink.find((l) => l.includes(`"run":"${completed}"`) && l.includes('"t":"apply"'))!;
    const cases: Array<[string, (d: string) => void, string[], (typeof VIOLATION_KINDS)[number]]> = [
      ['run absent from the final read', (d) => { const f = { ...final }; delete f[completed]; fs.writeFileSync(files(d).final, JSON.stringify(f)); }, [], 'lost-acknowledged-write'],
      ['final state changed', (d) => { const f = structuredClone(final); (f[completed]!.headState as { decision: unknown }).decision = { approved: true, note: 'forged' }; fs.writeFileSync(files(d).final, JSON.stringify(f)); }, [], 'wrong-end-state'],
      ['an effect applied under a second key', (d) => fs.appendFileSync(files(d).sink, `${apply.replace(/"key":"([^"]*)"/, '"key":"$1-again"')}\n`), [], 'duplicate-application'],
      ['a handler invoked once more than its attempts', (d) => fs.appendFileSync(files(d).sink, `${invoke}\n`), [], 'invocations-over-attempts'],
      ['a run unfinished at the deadline', () => undefined, [completed], 'stuck-run'],
    ];
    for (const [name, tamper, unfinished, kind] of cases) {
      const d = fs.mkdtempSync(path.join(dir, 'tampered-'));
      for (const f of Object.values(files(src))) fs.copyFileSync(f, path.join(d, path.basename(f)));
      tamper(d);
      const result = checkSoak(files(d), unfinished);
      expect(result.counts[kind], name).toBeGreaterThan(0);
    }
  });
});

describe('the nemesis schedule', () => {
  it('is a pure function of the seed, and every phase of both profiles injects its fault', () => {
    for (const [phases, hosts] of [[sqlitePhases(1), 0], [postgresPhases(1), 4], [postgresPhases(14), 4]] as const) {
      phases.forEach((phase, i) => {
        const plan = planPhase(1, phase, i, 4, hosts);
        expect(planPhase(1, phase, i, 4, hosts)).toEqual(plan);
        if (phase.fault === null) return expect(plan).toEqual([]);
        expect(plan.length, phase.name).toBeGreaterThan(0);
        for (const f of plan) {
          expect(f.kind).toBe(phase.fault);
          expect(f.at_ms).toBeLessThan(phase.duration_ms);
          // Link faults are healed inside their phase, on one of the project's hosts.
          if (f.heal_ms !== null) {
            expect(f.heal_ms).toBeGreaterThan(f.at_ms);
            expect(f.heal_ms).toBeLessThan(phase.duration_ms);
            expect(f.target).toBeGreaterThanOrEqual(1);
            expect(f.target).toBeLessThanOrEqual(hosts);
          }
        }
      });
    }
    expect(planPhase(2, postgresPhases(1)[1]!, 1, 4, 4)).not.toEqual(planPhase(1, postgresPhases(1)[1]!, 1, 4, 4));
  });
});
