/**
 * The generated-workflow campaign through real adapter processes (a small sample; `npm start --
 * --full` runs 2000 workflows per store): REMIT holds every property, the same seed gives the same
 * section, and the canary that transforms stored values again at every read is caught, with a
 * shrunk reproduction that replays.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROPERTIES } from './harness/checkers/verdict.js';
import { replayGeneratedScenario, runGeneratedCampaign } from './harness/generated/campaign.js';
import { findSystem } from './harness/systems.js';

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'remit-generated-test-'));
afterAll(() => fs.rmSync(workDir, { recursive: true, force: true }));

async function campaign(system: string, count: number, seed: number, shrink = false) {
  return runGeneratedCampaign({ systems: [findSystem(system)], count, seed, workDir, shrink, shrinkBudget: 12 });
}

describe('generated workflows on real adapters', () => {
  it('REMIT (SQLite, reference core) holds every property on a sample, under SIGKILL, thrown and store errors', async () => {
    const { section } = await campaign('remit-sqlite-reference', 9, 4);
    const s = section.systems[0]!;
    expect(s.faultedCells).toBe(9);
    expect(s.cells).toBe(s.workflows);
    expect(s.cells).toBeGreaterThanOrEqual(9);
    expect(s.violations).toEqual([]);
    expect(s.faults.notFired).toEqual([]);
    expect(Object.keys(s.faults.armed).sort()).toEqual(['sigkill', 'store-error', 'throw']);
    for (const p of PROPERTIES) expect(s.properties[p].violated, p).toBe(0);
    expect(s.properties['prefix-continuation'].holds).toBe(s.cells);
  });

  it('same seed, same section', async () => {
    const a = await campaign('remit-sqlite-reference', 3, 11);
    const b = await campaign('remit-sqlite-reference', 3, 11);
    expect(JSON.stringify(b.section)).toBe(JSON.stringify(a.section));
  });

  it('the canary that transforms stored values again is caught, and its shrunk reproduction replays the violation', async () => {
    const { section } = await campaign('canary-transform', 8, 1, true);
    const s = section.systems[0]!;
    expect(s.violations.length).toBeGreaterThan(0);
    expect(s.properties['checkpoint-validity'].violated).toBeGreaterThan(0);
    const repro = s.reproductions.find((r) => r.property === 'checkpoint-validity');
    expect(repro).toBeDefined();
    expect(repro!.removed).toContain('the fault');
    const verdicts = await replayGeneratedScenario(findSystem('canary-transform'), repro!.scenario, workDir);
    expect(verdicts['checkpoint-validity'].status).toBe('violated');
    const fine = await replayGeneratedScenario(findSystem('remit-sqlite-reference'), repro!.scenario, workDir);
    for (const p of PROPERTIES) expect(fine[p].status, p).not.toBe('violated');
  });
});
