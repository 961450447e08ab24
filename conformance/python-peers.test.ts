/**
 * The Python peers through real adapter processes: each adapter's `hello` declares every fault
 * point of the catalogue (supported with where, or not with a reason), every fault kind and
 * concurrency mode; and a smoke campaign of a few cells per Python system reaches verdicts, with
 * measured facts that show each adapter drives its framework (pinned versions). The full matrices
 * run from the CLI (`--full`), not here. Without a virtual environment these tests fail, unless
 * REMIT_SKIP_PYTHON=1 skips them explicitly.
 */
import { describe, expect, it } from 'vitest';
import { findCell, FAULT_KINDS, FAULT_POINTS } from './harness/cells.js';
import { runCampaign, selectSystems } from './harness/campaign.js';
import type { Saturation } from './harness/profile.js';
import { PROPERTIES } from './harness/checkers/index.js';
import { SystemPool } from './harness/runner.js';
import { adapterSpec, findSystem, REPO_ROOT, SYSTEMS, whyNotRunnable } from './harness/systems.js';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';

const PYTHON_SYSTEMS = SYSTEMS.filter((s) => s.runtime === 'python').map((s) => s.id);
const skip = process.env.REMIT_SKIP_PYTHON === '1';

/**
 * LangGraph's two resumers in two processes fire its gated effect twice only when their resumes
 * overlap: a resumer that reads the thread after the other wrote its next checkpoint finds no
 * pending interrupt and fires nothing. On a loaded machine (CI, 2 cores) one process once
 * finished before the other read: { fires: 1, k: 2 }. The finding is that racing resumers each
 * fire, so the cell is run again (other seeds), three runs in all, until both fire; the last
 * saturation is the verdict, and every run is kept for the failure message.
 */
async function langGraphRaces(first: Saturation): Promise<Saturation[]> {
  const runs = [first];
  for (let seed = 3; seed <= 4 && runs.at(-1)!.fires < first.k; seed++) {
    const { report } = await runCampaign({ mode: 'custom', systems: [findSystem('langgraph-py')], cells: [findCell('k=2/processes/different')], seed, jobs: 1, shrink: false, shrinkBudget: 0 });
    runs.push(report.systems[0]!.cells[0]!.saturation!);
  }
  return runs;
}

describe('system selection', () => {
  it('names every Python system it leaves out, with the reason (never silent)', () => {
    const quick = selectSystems({}, { ...process.env, REMIT_SKIP_PYTHON: '1' });
    const full = selectSystems({ full: true }, { ...process.env, REMIT_SKIP_PYTHON: '1' });
    for (const id of ['langgraph-py', 'crewai', 'pydantic-graph']) {
      expect(quick.notRun.find((n) => n.system === id)?.reason).toMatch(/REMIT_SKIP_PYTHON=1/);
      expect(quick.systems.map((s) => s.id)).not.toContain(id);
    }
    expect(full.notRun.map((n) => n.system)).toEqual(expect.arrayContaining(PYTHON_SYSTEMS));
    expect(() => selectSystems({ system: 'crewai' }, { ...process.env, REMIT_SKIP_PYTHON: '1' })).toThrow(/system crewai cannot run here: REMIT_SKIP_PYTHON/);
  });

  it('puts the three Python frameworks in the quick profile beside REMIT and LangGraph.js', () => {
    const quick = SYSTEMS.filter((s) => s.quick).map((s) => s.id);
    expect(quick).toEqual(['remit-sqlite-wasm', 'langgraph-js', 'langgraph-py', 'crewai', 'pydantic-graph']);
  });
});

describe.skipIf(skip)('Python adapters (REMIT_SKIP_PYTHON=1 skips them)', () => {
  for (const id of PYTHON_SYSTEMS) {
    it(`${id}: its virtual environment is built`, () => {
      expect(whyNotRunnable(findSystem(id))).toBeNull();
    });

    it(`${id}: hello declares every fault point, kind and concurrency mode`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `hello-${id}-`));
      const pool = new SystemPool(adapterSpec(findSystem(id), dir), REPO_ROOT);
      try {
        const hello = await pool.init();
        expect(hello.system).toBe(id);
        expect(Object.keys(hello.points).sort()).toEqual(FAULT_POINTS.map((p) => p.name).sort());
        for (const [point, support] of Object.entries(hello.points)) {
          if (support.supported) expect(support.where.length, point).toBeGreaterThan(10);
          else expect(support.reason.length, point).toBeGreaterThan(10);
        }
        expect(Object.keys(hello.faultKinds).sort()).toEqual([...FAULT_KINDS].sort());
        expect(Object.keys(hello.concurrency).sort()).toEqual(['hosts', 'in-process', 'processes']);
        expect(hello.concurrency.hosts).toMatchObject({ supported: false });
        expect(hello.concurrency.processes).toMatchObject({ supported: true });
        expect(hello.continueFrom).toBeDefined();
      } finally {
        await pool.closeAll();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('a smoke campaign reaches verdicts on every Python system, and shows each framework being driven', async () => {
    const cells = ['in-handler-after-effect:charge/sigkill', 'after-commit:NODE_COMPLETED@compute/store-error', 'k=2/processes/different', 'k=2/in-process/same'].map(findCell);
    const systems = ['langgraph-py', 'crewai', 'pydantic-graph'].map(findSystem);
    const { report, unavailable } = await runCampaign({ mode: 'custom', systems, cells, seed: 2, jobs: 3, shrink: false, shrinkBudget: 0 });
    expect(unavailable).toEqual([]);
    for (const s of report.systems) {
      expect(s.cells.map((c) => c.cellId)).toEqual(cells.map((c) => c.id));
      for (const cell of s.cells) {
        expect(cell.applicable, `${s.system} ${cell.cellId}: ${cell.reason}`).toBe(true);
        for (const p of PROPERTIES) expect(['holds', 'violated', 'not-applicable']).toContain(cell.verdicts[p].status);
      }
    }
    const sys = (id: string) => report.systems.find((s) => s.system === id)!;
    const cell = (id: string, cellId: string) => sys(id).cells.find((c) => c.cellId === cellId)!;
    const evidence = (id: string, cellId: string, p: (typeof PROPERTIES)[number]) => {
      const v = cell(id, cellId).verdicts[p];
      return v.status === 'violated' ? v.evidence.join('\n') : '';
    };
    // LangGraph records a second resume (and runs nothing for it).
    expect(evidence('langgraph-py', 'k=2/in-process/same', 'consume-once')).toMatch(/the second resume was recorded/);
    // CrewAI's recovery kickoff(inputs={id}) runs compute again although its completion was durable.
    expect(evidence('crewai', 'in-handler-after-effect:charge/sigkill', 'prefix-continuation')).toMatch(/node compute ran again/);
    // pydantic-graph cannot continue a run whose node was running when the process died.
    expect(evidence('pydantic-graph', 'in-handler-after-effect:charge/sigkill', 'liveness')).toMatch(/recovery named no next action/);
    // Concurrent resumers: LangGraph and CrewAI serve both; pydantic-graph's load_next hands the
    // snapshot to one at most. Under load it was once none (CI, 2 cores busy with the soak; not
    // reproduced in three runs alone): the likely cause is pydantic-graph's lock file, which every
    // step of the run takes again with a 1 s timeout, failing the run before its effect.
    const raced = await langGraphRaces(cell('langgraph-py', 'k=2/processes/different').saturation!);
    expect(raced.at(-1), `LangGraph's fires over three runs of the cell: ${JSON.stringify(raced)}`).toEqual({ fires: 2, k: 2 });
    for (const s of raced) expect(s.fires).toBeLessThanOrEqual(s.k);
    expect(cell('crewai', 'k=2/in-process/same').saturation).toEqual({ fires: 2, k: 2 });
    const handedOut = cell('pydantic-graph', 'k=2/in-process/same').saturation!;
    expect(handedOut.k).toBe(2);
    expect(handedOut.fires).toBeLessThanOrEqual(1);
    // The study comparison covers these systems.
    const compared = report.study.findings.flatMap((f) => f.results.map((r) => r.system));
    expect(compared).toEqual(expect.arrayContaining(['langgraph-py', 'crewai', 'pydantic-graph']));
  });
});
