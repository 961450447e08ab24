/** Unit tests of the harness parts that are not checkers: generator, catalogue, sink, shrinking rules. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_CELLS, CONCURRENCY_CELLS, FAULT_CELLS, FAULT_POINTS, findCell, RECOVER_POINT, RECOVER_POINT_WITHOUT_INTENT } from './cells.js';
import type { HelloResult } from './protocol.js';
import { applicability, recoverPointFor } from './runner.js';
import { sameFailure, stepsAreCoherent } from './profile.js';
import { Prng } from './prng.js';
import { cellSeed, generateScenario, ScenarioSchema } from './scenario.js';
import { countEffects, EffectSinkWriter, readSink } from './sink.js';
import { expectedFinalState, RefundStateSchema } from './workflow.js';

describe('cell catalogue', () => {
  it('has at least the study\'s 39 fault cells and 36 concurrency cells (k = 2, 4, 8, 16 × 3 modes × same/different resumers and recoverers), uniquely named', () => {
    expect(FAULT_CELLS.length).toBeGreaterThanOrEqual(39);
    expect(CONCURRENCY_CELLS.length).toBe(36);
    expect(CONCURRENCY_CELLS.filter((c) => c.mode === 'hosts').map((c) => c.id)).toContain('k=2/hosts/recover');
    expect(CONCURRENCY_CELLS.filter((c) => c.values === 'recover').map((c) => c.id)).toHaveLength(12);
    expect(new Set(ALL_CELLS.map((c) => c.id)).size).toBe(ALL_CELLS.length);
  });

  it('gives store errors only to commit points', () => {
    for (const cell of FAULT_CELLS.filter((c) => c.kind === 'store-error')) expect(cell.point).toMatch(/^(before|after)-commit:/);
    expect(FAULT_POINTS.filter((p) => p.place === 'code').map((p) => p.name)).toContain('inside-pure:compute');
  });

  it('makes recoverer cells applicable only to adapters that crash at the intent, and in one process only with continueMany', () => {
    const yes = { supported: true as const, where: 'here' };
    const hello: HelloResult = {
      protocol: 1, system: 's', variant: 'v', versions: {},
      points: { [RECOVER_POINT]: yes }, faultKinds: { sigkill: yes },
      concurrency: { 'in-process': yes, processes: yes }, fork: yes,
    };
    expect(applicability(hello, findCell('k=4/processes/recover'))).toEqual({ applicable: true });
    expect(applicability(hello, findCell('k=4/in-process/recover'))).toMatchObject({ applicable: false, reason: expect.stringMatching(/continueMany/) });
    expect(applicability(hello, findCell('k=4/in-process/same'))).toEqual({ applicable: true });
    const withMany = { ...hello, concurrency: { ...hello.concurrency, 'recoverers-in-process': yes } };
    expect(applicability(withMany, findCell('k=4/in-process/recover'))).toEqual({ applicable: true });
    expect(recoverPointFor(withMany)).toBe(RECOVER_POINT);
    // No intent record (LangGraph): the crash right after the checkpoint before charge instead.
    const noIntent = { ...withMany, points: { [RECOVER_POINT]: { supported: false as const, reason: 'no intent record' }, [RECOVER_POINT_WITHOUT_INTENT]: yes } };
    expect(applicability(noIntent, findCell('k=2/processes/recover'))).toEqual({ applicable: true });
    expect(recoverPointFor(noIntent)).toBe(RECOVER_POINT_WITHOUT_INTENT);
    const neither = { ...withMany, points: {} };
    expect(applicability(neither, findCell('k=2/processes/recover'))).toMatchObject({ applicable: false, reason: expect.stringMatching(/supports neither/) });
  });

  it('refuses an unknown cell by name', () => {
    expect(() => findCell('after-commit:NOPE/sigkill')).toThrow(/unknown cell "after-commit:NOPE\/sigkill"/);
  });
});

describe('scenarios', () => {
  it('are a pure function of cell and seed, and valid', () => {
    const a = generateScenario('k=8/processes/different', 42);
    expect(generateScenario('k=8/processes/different', 42)).toEqual(a);
    expect(generateScenario('k=8/processes/different', 43)).not.toEqual(a);
    expect(ScenarioSchema.parse(a)).toEqual(a);
    expect(a.concurrency?.values).toHaveLength(8);
    expect(new Set(a.concurrency?.values.map((v) => v.note)).size).toBe(8);
  });

  it('give the same inputs to every system (the cell seed does not depend on the system)', () => {
    expect(cellSeed(1, 'inside-pure:compute/throw')).toBe(cellSeed(1, 'inside-pure:compute/throw'));
    expect(cellSeed(1, 'inside-pure:compute/throw')).not.toBe(cellSeed(2, 'inside-pure:compute/throw'));
  });

  it('have an expected final state that satisfies the state schema', () => {
    const s = generateScenario('after-commit:RUN_STARTED/throw', 5);
    expect(RefundStateSchema.safeParse(expectedFinalState(s.input, s.resumeValue)).success).toBe(true);
  });

  it('come from a generator that repeats from its seed', () => {
    const a = new Prng(7);
    const b = new Prng(7);
    expect(Array.from({ length: 5 }, () => a.nextU32())).toEqual(Array.from({ length: 5 }, () => b.nextU32()));
    expect(() => new Prng(-1)).toThrow(/non-negative/);
  });
});

describe('effect sink', () => {
  it('counts raw invocations and distinct applied keys, and ignores a torn last line', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sink-test-'));
    const file = path.join(dir, 'effects.jsonl');
    const sink = new EffectSinkWriter(file);
    sink.invoke('charge', 'k1', 'r');
    sink.apply('charge', 'k1', 'r');
    sink.invoke('charge', 'k1', 'r');
    sink.apply('charge', 'k1', 'r');
    sink.close();
    fs.appendFileSync(file, '{"t":"invoke","node":"cha');
    const contents = readSink(file);
    expect(contents.tornBytes).toBeGreaterThan(0);
    expect(countEffects(contents.lines, 'charge')).toEqual({ invocations: 2, applyLines: 2, appliedKeys: ['k1'] });
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('shrinking rules', () => {
  it('keep only coherent schedules', () => {
    expect(stepsAreCoherent(['start', 'resume'])).toBe(true);
    expect(stepsAreCoherent(['resume'])).toBe(false);
    expect(stepsAreCoherent(['continue-from-older'])).toBe(false);
    expect(stepsAreCoherent([])).toBe(false);
    expect(stepsAreCoherent(['start', 'resume-duplicate'])).toBe(false);
  });

  it('accept a smaller run only when it fails the same way', () => {
    expect(sameFailure(['notify fired 16 times for 16 resumers'], ['notify fired 2 times for 2 resumers'])).toBe(true);
    expect(sameFailure(['notify fired 16 times for 16 resumers'], ['0 of 2 concurrent resumers were served'])).toBe(false);
  });
});
