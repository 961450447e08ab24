/**
 * The comparison with the study on hand-made profiles: a finding whose phenomenon our evidence
 * shows agrees, one it does not show disagrees (with a reproduction command), one whose cells are
 * not applicable is "not measured here", and a property no finding covers is "not measured by the
 * study". Also: the findings file parses and names only known systems.
 */
import { describe, expect, it } from 'vitest';
import { PROPERTIES, type PropertyId, type Verdict } from '../checkers/index.js';
import type { CellResult, SystemProfile } from '../profile.js';
import { generateScenario } from '../scenario.js';
import { SYSTEMS } from '../systems.js';
import { compareWithStudy, loadFindings } from './study.js';

const rerun = (system: string, cellId: string, seed: number) => `rerun ${system} ${cellId} ${seed}`;

function cell(cellId: string, overrides: Partial<Record<PropertyId, Verdict>> = {}, saturation: CellResult['saturation'] = null, applicable = true): CellResult {
  const verdicts = Object.fromEntries(
    PROPERTIES.map((p) => [p, applicable ? (overrides[p] ?? { status: 'holds', notes: [] }) : { status: 'not-applicable', reason: 'no such mode' }]),
  ) as Record<PropertyId, Verdict>;
  return { cellId, matrix: cellId.startsWith('k=') ? 'concurrency' : 'fault', applicable, reason: applicable ? null : 'no such mode', verdicts, saturation, scenario: generateScenario(cellId, 1) };
}

function profile(system: string, cells: CellResult[]): SystemProfile {
  const properties = Object.fromEntries(
    PROPERTIES.map((p) => {
      const violated = cells.filter((c) => c.verdicts[p].status === 'violated').length;
      const holds = cells.filter((c) => c.verdicts[p].status === 'holds').length;
      return [p, { status: violated > 0 ? 'violated' : holds > 0 ? 'holds' : 'not-applicable', holds, violated, notApplicable: cells.length - holds - violated, smallest: null }];
    }),
  ) as SystemProfile['properties'];
  return { system, label: system, canary: false, variant: 'test', versions: {}, cells, properties };
}

const violated = (...evidence: string[]): Verdict => ({ status: 'violated', evidence });

describe('comparison with the study', () => {
  it('agrees when our evidence shows the finding, disagrees with a reproduction when it does not', () => {
    const crewaiShows = profile('crewai', [cell('after-commit:NODE_COMPLETED@charge/sigkill', { 'effect-exactly-once': violated('charge: handler invoked 1 more time(s) after its completion was durable (fault at x)') })]);
    const crewaiDoesNot = profile('crewai', [cell('after-commit:NODE_COMPLETED@charge/sigkill')]);
    const agree = compareWithStudy([crewaiShows], 1, rerun).findings.find((f) => f.id === 'crewai-reexecutes-completed-methods')!;
    expect(agree.status).toBe('agree');
    const disagree = compareWithStudy([crewaiDoesNot], 1, rerun).findings.find((f) => f.id === 'crewai-reexecutes-completed-methods')!;
    expect(disagree.status).toBe('disagree');
    expect(disagree.results[0]?.reproduction).toEqual(['rerun crewai after-commit:NODE_COMPLETED@charge/sigkill 1']);
  });

  it('does not take another violation of the same property for the finding', () => {
    const other = profile('crewai', [cell('after-commit:NODE_COMPLETED@charge/sigkill', { 'effect-exactly-once': violated('notify: applied under 0 distinct key(s), expected exactly 1') })]);
    expect(compareWithStudy([other], 1, rerun).findings.find((f) => f.id === 'crewai-reexecutes-completed-methods')?.status).toBe('disagree');
  });

  it('says "not measured here" when the cells a finding needs are not applicable, and marks uncovered verdicts', () => {
    const p = profile('pydantic-graph', [cell('k=2/hosts/same', {}, null, false), cell('k=2/processes/same', {}, { fires: 1, k: 2 })]);
    const c = compareWithStudy([p], 1, rerun);
    expect(c.findings.find((f) => f.id === 'consume-once-crosses-hosts')?.status).toBe('not measured here');
    expect(c.findings.find((f) => f.id === 'consume-once-concurrent')?.status).toBe('disagree');
    expect(c.verdicts.find((v) => v.system === 'pydantic-graph' && v.property === 'fork-determinism')?.status).toBe('not measured by the study');
    expect(c.verdicts.find((v) => v.system === 'pydantic-graph' && v.property === 'consume-once')?.status).toBe('disagree');
  });

  it('compares whole profiles across frameworks', () => {
    const a = profile('langgraph-py', [cell('inside-pure:compute/throw')]);
    const b = profile('crewai', [cell('inside-pure:compute/throw')]);
    const c = profile('pydantic-graph', [cell('inside-pure:compute/throw', { liveness: violated('x') })]);
    expect(compareWithStudy([a, b, c], 1, rerun).findings.find((f) => f.id === 'distinct-profiles')?.status).toBe('disagree');
    expect(compareWithStudy([a, c], 1, rerun).findings.find((f) => f.id === 'distinct-profiles')?.status).toBe('agree');
  });

  it('reads a findings file that cites the study and names only known systems', () => {
    const data = loadFindings();
    expect(data.citation).toBe('Khan, Resume Means Resume, arXiv:2608.03836, 2026');
    const known = SYSTEMS.map((s) => s.id);
    for (const f of data.findings) for (const s of f.systems) expect(known).toContain(s);
  });
});
