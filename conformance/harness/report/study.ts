/**
 * Our verdicts next to the study's published findings (conformance/study/findings.json): for each
 * finding and each system it concerns, agree / disagree / not measured here, with what we measured
 * and, for a disagreement, the commands that reproduce our side; and for each (system, property)
 * verdict of the profile table, whether a finding of the study covers it. Deterministic: it reads
 * only the profiles, so the same seed gives the same comparison.
 */
import fs from 'node:fs';
import { z } from 'zod';
import { findCell, FAULT_POINTS } from '../cells.js';
import { PROPERTIES, type PropertyId } from '../checkers/index.js';
import type { CellResult, SystemProfile } from '../profile.js';

export const FINDINGS_PATH = new URL('../../study/findings.json', import.meta.url);

const ScopeSchema = z.object({
  matrix: z.enum(['fault', 'concurrency']).optional(),
  faultKinds: z.array(z.string()).optional(),
  places: z.array(z.enum(['commit', 'code'])).optional(),
});
const PropertySchema = z.enum(PROPERTIES);
const CriterionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('evidence'), property: PropertySchema, scope: ScopeSchema, expect: z.enum(['present', 'absent']), patterns: z.array(z.string()).min(1) }),
  z.object({
    kind: z.literal('saturation'),
    property: PropertySchema,
    mode: z.enum(['in-process', 'processes', 'hosts']),
    studyCells: z.object({ saturated: z.number().int(), of: z.number().int() }).nullable(),
  }),
  z.object({ kind: z.literal('distinct-profiles') }),
]);
const FindingSchema = z.object({ id: z.string(), framework: z.string(), systems: z.array(z.string()).min(1), claim: z.string(), criteria: z.array(CriterionSchema).min(1) });
export const FindingsSchema = z.object({ format: z.literal('remit-conformance-study-findings/1'), citation: z.string(), source: z.string(), findings: z.array(FindingSchema) });
export type Finding = z.infer<typeof FindingSchema>;
type Criterion = z.infer<typeof CriterionSchema>;
type Scope = z.infer<typeof ScopeSchema>;

export type Agreement = 'agree' | 'disagree' | 'not measured here';

export interface SystemResult {
  system: string;
  status: Agreement;
  /** What this harness measured, in one or two sentences. */
  measured: string;
  /** Commands that reproduce our side of a disagreement. */
  reproduction: string[];
}

export interface FindingResult {
  id: string;
  framework: string;
  claim: string;
  status: Agreement;
  results: SystemResult[];
}

export interface VerdictComparison {
  system: string;
  property: PropertyId;
  /** agree / disagree / not measured here, or "not measured by the study" when no finding covers it. */
  status: Agreement | 'not measured by the study';
  findings: string[];
}

export interface StudyComparison {
  citation: string;
  findings: FindingResult[];
  verdicts: VerdictComparison[];
}

export function loadFindings(): z.infer<typeof FindingsSchema> {
  const parsed = FindingsSchema.safeParse(JSON.parse(fs.readFileSync(FINDINGS_PATH, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`conformance/study/findings.json is malformed at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  return parsed.data;
}

function inScope(cell: CellResult, scope: Scope): boolean {
  const c = findCell(cell.cellId);
  if (scope.matrix !== undefined && c.matrix !== scope.matrix) return false;
  if (scope.faultKinds !== undefined && (c.matrix !== 'fault' || !scope.faultKinds.includes(c.kind))) return false;
  if (scope.places !== undefined) {
    if (c.matrix !== 'fault') return false;
    const place = FAULT_POINTS.find((p) => p.name === c.point)?.place;
    if (place === undefined || !scope.places.includes(place)) return false;
  }
  return true;
}

function describeScope(scope: Scope): string {
  const parts = [
    scope.matrix === undefined ? '' : `${scope.matrix} matrix`,
    scope.faultKinds === undefined ? '' : `${scope.faultKinds.join('/')} cells`,
    scope.places === undefined ? '' : `at ${scope.places.join('/')} points`,
  ].filter((p) => p !== '');
  return parts.length === 0 ? 'all cells' : parts.join(', ');
}

function matching(cell: CellResult, property: PropertyId, patterns: RegExp[]): string | null {
  const v = cell.verdicts[property];
  if (v.status !== 'violated') return null;
  return v.evidence.find((e) => patterns.some((p) => p.test(e))) ?? null;
}

interface Commands {
  rerun: (system: string, cellId: string) => string;
}

function evidenceCriterion(profile: SystemProfile, c: Extract<Criterion, { kind: 'evidence' }>, cmd: Commands): SystemResult {
  const cells = profile.cells.filter((cell) => inScope(cell, c.scope));
  const measuredCells = cells.filter((cell) => cell.verdicts[c.property].status !== 'not-applicable');
  const where = describeScope(c.scope);
  if (measuredCells.length === 0) {
    const reason = cells[0]?.reason ?? cells.map((x) => x.verdicts[c.property]).find((v) => v.status === 'not-applicable')?.reason ?? 'no such cell was run';
    return { system: profile.system, status: 'not measured here', measured: `${c.property} was not applicable in ${where}: ${reason}`, reproduction: [] };
  }
  const patterns = c.patterns.map((p) => new RegExp(p));
  const hits = measuredCells.flatMap((cell) => {
    const e = matching(cell, c.property, patterns);
    return e === null ? [] : [{ cell, evidence: e }];
  });
  const total = measuredCells.length;
  const first = hits[0];
  if (c.expect === 'present') {
    if (first !== undefined) {
      return { system: profile.system, status: 'agree', measured: `seen in ${hits.length} of ${total} cells (${where}), e.g. ${first.cell.cellId}: "${first.evidence}"`, reproduction: [] };
    }
    const violated = measuredCells.filter((cell) => cell.verdicts[c.property].status === 'violated').length;
    const example = measuredCells[0] as CellResult;
    return {
      system: profile.system,
      status: 'disagree',
      measured: `not seen in any of ${total} cells (${where}); ${c.property} holds in ${total - violated} and is violated for other reasons in ${violated}`,
      reproduction: [cmd.rerun(profile.system, example.cellId)],
    };
  }
  if (first === undefined) {
    return { system: profile.system, status: 'agree', measured: `not seen in any of ${total} cells (${where})`, reproduction: [] };
  }
  return {
    system: profile.system,
    status: 'disagree',
    measured: `seen in ${hits.length} of ${total} cells (${where}), e.g. ${first.cell.cellId}: "${first.evidence}"`,
    reproduction: [cmd.rerun(profile.system, first.cell.cellId)],
  };
}

function saturationCriterion(profile: SystemProfile, c: Extract<Criterion, { kind: 'saturation' }>, cmd: Commands): SystemResult {
  const cells = profile.cells.filter((cell) => cell.matrix === 'concurrency' && cell.cellId.includes(`/${c.mode}/`) && !cell.cellId.endsWith('recover-race'));
  const measured = cells.filter((cell) => cell.applicable && cell.saturation !== null);
  if (measured.length === 0) {
    const reason = cells.find((cell) => !cell.applicable)?.reason ?? 'no such cell was run';
    return { system: profile.system, status: 'not measured here', measured: `the ${c.mode} column was not applicable: ${reason}`, reproduction: [] };
  }
  const saturated = measured.filter((cell) => cell.saturation!.fires === cell.saturation!.k);
  const figures = measured.map((cell) => `${cell.cellId.split('/')[0]} ${cell.cellId.split('/')[2]} ${cell.saturation!.fires}/${cell.saturation!.k}`).join(', ');
  const text = `the gated effect fired k times in ${saturated.length} of ${measured.length} ${c.mode} cells (${figures})`;
  // The study reports the failure in most cells (36 of 40): agree when most of ours saturate too.
  if (saturated.length * 2 >= measured.length) return { system: profile.system, status: 'agree', measured: text, reproduction: [] };
  const example = measured.find((cell) => cell.saturation!.fires !== cell.saturation!.k) as CellResult;
  return { system: profile.system, status: 'disagree', measured: text, reproduction: [cmd.rerun(profile.system, example.cellId)] };
}

function combine(results: SystemResult[]): Agreement {
  if (results.some((r) => r.status === 'disagree')) return 'disagree';
  if (results.some((r) => r.status === 'agree')) return 'agree';
  return 'not measured here';
}

function profileSignature(p: SystemProfile): string {
  return PROPERTIES.map((prop) => `${prop}=${p.properties[prop].status}`).join(', ');
}

function distinctProfiles(finding: Finding, profiles: SystemProfile[]): SystemResult[] {
  const present = profiles.filter((p) => finding.systems.includes(p.system));
  const system = present.map((p) => p.system).join(', ') || finding.systems.join(', ');
  if (present.length < 2) {
    return [{ system, status: 'not measured here', measured: `fewer than two of ${finding.systems.join(', ')} were measured in this run`, reproduction: [] }];
  }
  const same: string[] = [];
  present.forEach((a, i) => present.slice(i + 1).forEach((b) => profileSignature(a) === profileSignature(b) && same.push(`${a.system} = ${b.system}`)));
  const measured = present.map((p) => `${p.system}: ${PROPERTIES.filter((prop) => p.properties[prop].status === 'violated').length} violated, ${PROPERTIES.filter((prop) => p.properties[prop].status === 'holds').length} holding, ${PROPERTIES.filter((prop) => p.properties[prop].status === 'not-applicable').length} not applicable`).join('; ');
  if (same.length === 0) return [{ system, status: 'agree', measured: `all ${present.length} profiles differ (${measured})`, reproduction: [] }];
  return [{ system, status: 'disagree', measured: `identical profiles: ${same.join('; ')}`, reproduction: [] }];
}

export function compareWithStudy(profiles: SystemProfile[], seed: number, rerun: (system: string, cellId: string, seed: number) => string): StudyComparison {
  const data = loadFindings();
  const cmd: Commands = { rerun: (system, cellId) => rerun(system, cellId, seed) };
  const findings: FindingResult[] = data.findings.map((finding) => {
    let results: SystemResult[];
    if (finding.criteria.some((c) => c.kind === 'distinct-profiles')) {
      results = distinctProfiles(finding, profiles);
    } else {
      results = finding.systems.flatMap((id) => {
        const profile = profiles.find((p) => p.system === id);
        if (profile === undefined) return [];
        const parts = finding.criteria.map((c) => {
          if (c.kind === 'evidence') return evidenceCriterion(profile, c, cmd);
          if (c.kind === 'saturation') return saturationCriterion(profile, c, cmd);
          throw new Error(`bug: criterion ${c.kind} mixed with others in finding ${finding.id}`);
        });
        return [{ system: id, status: combine(parts), measured: parts.map((p) => p.measured).join('; '), reproduction: parts.flatMap((p) => p.reproduction) }];
      });
    }
    return { id: finding.id, framework: finding.framework, claim: finding.claim, status: combine(results), results };
  });
  const verdicts: VerdictComparison[] = profiles.flatMap((profile) =>
    PROPERTIES.map((property) => {
      const covering = data.findings.filter(
        (f) => f.systems.includes(profile.system) && f.criteria.some((c) => c.kind !== 'distinct-profiles' && c.property === property),
      );
      const results = covering.flatMap((f) => findings.find((r) => r.id === f.id)?.results.filter((r) => r.system === profile.system) ?? []);
      return {
        system: profile.system,
        property,
        status: covering.length === 0 ? ('not measured by the study' as const) : combine(results),
        findings: covering.map((f) => f.id),
      };
    }),
  );
  return { citation: data.citation, findings, verdicts };
}
