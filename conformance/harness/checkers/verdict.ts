/** Verdicts and the small helpers every checker shares. Checkers never import the runner. */
import type { CellRun, SinkWindow } from '../observations.js';
import type { RunView } from '../protocol.js';
import type { SinkLine } from '../sink.js';

export const PROPERTIES = [
  'prefix-continuation',
  'effect-exactly-once',
  'fork-determinism',
  'checkpoint-validity',
  'consume-once',
  'recovery-determinism',
  'fork-intent',
  'liveness',
] as const;
export type PropertyId = (typeof PROPERTIES)[number];

export type Verdict =
  | { status: 'holds'; notes: string[] }
  | { status: 'violated'; evidence: string[] }
  | { status: 'not-applicable'; reason: string };

export interface Checker {
  property: PropertyId;
  title: string;
  check(run: CellRun): Verdict;
}

/** Collects failures; the verdict is "violated" as soon as one was recorded. */
export class Findings {
  readonly evidence: string[] = [];
  readonly notes: string[] = [];

  fail(message: string): void {
    this.evidence.push(message);
  }

  note(message: string): void {
    if (!this.notes.includes(message)) this.notes.push(message);
  }

  expect(condition: boolean, message: string): void {
    if (!condition) this.fail(message);
  }

  verdict(): Verdict {
    return this.evidence.length > 0 ? { status: 'violated', evidence: this.evidence } : { status: 'holds', notes: this.notes };
  }
}

export function notApplicable(reason: string): Verdict {
  return { status: 'not-applicable', reason };
}

/** JSON with object keys sorted, so equal values print equally. */
export function canonical(value: unknown): string {
  // JSON.stringify gives undefined, not a string, for undefined (a run that ended without a state):
  // the text of a finding must still be text.
  return JSON.stringify(sortKeys(value)) ?? String(value);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, sortKeys(v)]));
  }
  return value;
}

export function sameValue(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

export function linesIn(run: CellRun, window: SinkWindow | undefined): SinkLine[] {
  if (window === undefined) return [];
  return run.sink.slice(window.from, window.to);
}

/** Sink lines the main run wrote during its own steps (start, resume(s), duplicate resume). */
export function mainRunLines(run: CellRun): { line: SinkLine; index: number }[] {
  const s = run.steps;
  const windows = [s.start?.window, s.resume?.window, s.resumeConcurrent?.window, s.resumeDuplicate?.window].filter(
    (w): w is SinkWindow => w !== undefined,
  );
  const main = run.scenario.runIds.main;
  const out: { line: SinkLine; index: number }[] = [];
  for (const w of windows) {
    for (let i = w.from; i < w.to; i++) {
      const line = run.sink[i];
      if (line !== undefined && line.run === main) out.push({ line, index: i });
    }
  }
  return out;
}

export function mainFaults(run: CellRun) {
  return run.faults.filter((f) => f.runId === run.scenario.runIds.main && (f.step === 'start' || f.step === 'resume'));
}

/** Which records of `before` are missing or changed in `after` (by record id, then bytes). */
export function recordChanges(before: RunView, after: RunView): { missing: string[]; changed: string[]; added: string[] } {
  const afterById = new Map(after.records.map((r) => [r.id, r.hex]));
  const beforeIds = new Set(before.records.map((r) => r.id));
  const missing: string[] = [];
  const changed: string[] = [];
  for (const r of before.records) {
    const hex = afterById.get(r.id);
    if (hex === undefined) missing.push(r.id);
    else if (hex !== r.hex) changed.push(r.id);
  }
  const added = after.records.filter((r) => !beforeIds.has(r.id)).map((r) => r.id);
  return { missing, changed, added };
}

export function describeChanges(c: { missing: string[]; changed: string[]; added: string[] }): string {
  return `${c.added.length} record(s) added, ${c.changed.length} changed, ${c.missing.length} removed`;
}

export function unchanged(c: { missing: string[]; changed: string[]; added: string[] }): boolean {
  return c.missing.length === 0 && c.changed.length === 0 && c.added.length === 0;
}

/** The views of every run in the cell, labelled, for checks that apply to all stored states. */
export function allViews(run: CellRun): { label: string; view: RunView }[] {
  const s = run.steps;
  const candidates: [string, RunView | null | undefined][] = [
    ['baseline', s.baseline?.view],
    ['main run', run.mainView],
    ['invalid-resume side run', s.probeInvalidResume?.valid.view],
    ['invalid-state side run', s.probeInvalidState?.view],
    ...(s.forkTwice?.forks ?? []).map((f, i): [string, RunView | null] => [`fork ${i + 1}`, f.view]),
  ];
  return candidates.filter((c): c is [string, RunView] => c[1] !== null && c[1] !== undefined).map(([label, view]) => ({ label, view }));
}

export function outcomeText(o: { outcome: string; refusal?: { code: string; message: string }; error?: { kind: string; message: string } } | null): string {
  if (o === null) return 'no answer';
  if (o.refusal !== undefined) return `${o.outcome} (${o.refusal.code}: ${clip(o.refusal.message)})`;
  if (o.error !== undefined) return `${o.outcome} (${o.error.kind}: ${clip(o.error.message)})`;
  return o.outcome;
}

export function clip(text: string, max = 160): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}
