/** Figures from a soak's history: throughput and latency per phase, faults injected by kind. */
import { readHistory, type CompletionLine } from './history.js';
import type { SoakRun } from './campaign.js';

export interface PhaseFigures {
  phase: string;
  fault: string;
  duration_s: number;
  operations_completed: number;
  ops_per_s: number;
  runs_ended: number;
  runs_per_s: number;
  ambiguous: number;
  start_ms_p50: number | null;
  start_ms_p99: number | null;
  resume_ms_p50: number | null;
  resume_ms_p99: number | null;
}

export interface Figures {
  phases: PhaseFigures[];
  faults_injected: Record<string, number>;
  worker_restarts: number;
  drain_s: number;
  wall_s: number;
}

export function quantile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return Math.round(sorted[i]! * 10) / 10;
}

const r2 = (x: number) => Math.round(x * 100) / 100;

export function figuresOf(historyPath: string, soak: SoakRun): Figures {
  const history = readHistory(historyPath);
  const done = history.filter((l): l is CompletionLine => l.k === 'op' && l.type !== 'invoke');
  const phases: PhaseFigures[] = soak.phases.map((p) => {
    const inPhase = done.filter((d) => d.t_ms >= p.start_ms && d.t_ms < p.end_ms);
    const completed = inPhase.filter((d) => d.type !== 'info');
    const ended = inPhase.filter((d) => d.type === 'ok' && (d.outcome.outcome === 'completed' || d.outcome.outcome === 'failed'));
    const lat = (op: string) => inPhase.filter((d) => d.op === op && d.type === 'ok').map((d) => d.latency_ms).sort((a, b) => a - b);
    const starts = lat('start');
    const resumes = lat('resume');
    const s = (p.end_ms - p.start_ms) / 1000;
    return {
      phase: p.name,
      fault: p.fault ?? 'none',
      duration_s: r2(s),
      operations_completed: completed.length,
      ops_per_s: r2(completed.length / s),
      runs_ended: ended.length,
      runs_per_s: r2(ended.length / s),
      ambiguous: inPhase.filter((d) => d.type === 'info').length,
      start_ms_p50: quantile(starts, 0.5),
      start_ms_p99: quantile(starts, 0.99),
      resume_ms_p50: quantile(resumes, 0.5),
      resume_ms_p99: quantile(resumes, 0.99),
    };
  });
  const faults: Record<string, number> = {};
  for (const l of history) if (l.k === 'nemesis' && l.action === 'inject') faults[l.fault] = (faults[l.fault] ?? 0) + 1;
  const spawned = history.filter((l) => l.k === 'worker' && l.event === 'spawned').length;
  const workers = new Set(history.flatMap((l) => (l.k === 'worker' ? [l.worker] : []))).size;
  return {
    phases,
    faults_injected: faults,
    worker_restarts: spawned - workers,
    drain_s: r2((soak.drain.end_ms - soak.drain.start_ms) / 1000),
    wall_s: r2(soak.wall_ms / 1000),
  };
}
