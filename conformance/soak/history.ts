/**
 * The soak's history: one JSON line per event, appended by the driver (which the nemesis never
 * kills). In the style of Jepsen's histories: every operation has an `invoke` line and one
 * completion line with the same `op_id`:
 *
 *   ok    the system acknowledged it (a start that parked or ended, a resume that was served, a fork)
 *   fail  the system refused it, and a refusal writes nothing (ALREADY_CONSUMED, NOT_PARKED, CONFLICT)
 *   info  ambiguous: the worker died, the request timed out, or a store error came back (the write
 *         may or may not have committed); the checker accepts either and requires the next reads to agree
 *
 * Besides operations, the history holds `plan` lines (what a run is and what it expects: the
 * checker's independent model needs nothing else), `read` results (with a digest of every stored
 * record, so a later read that lost or rewrote a record is seen) and `nemesis` lines (faults
 * injected and healed).
 */
import fs from 'node:fs';

export type CompletionType = 'ok' | 'fail' | 'info';

export interface OutcomeSummary {
  outcome: string;
  refusal?: string;
  error?: string;
  state?: unknown;
  /** recoverAll: per run, the outcome. */
  runs?: Array<{ runId: string; outcome: string; refusal?: string }>;
}

export interface ReadSummary {
  exists: boolean;
  status: string;
  claims: number;
  /** Short digest of each stored record, in seq order. */
  records: string[];
}

export type InvokeLine = { k: 'op'; type: 'invoke'; op_id: number; t_ms: number; worker: number; pid: number; op: string; run?: string; args?: Record<string, unknown>; group?: number };
export type CompletionLine = { k: 'op'; type: CompletionType; op_id: number; t_ms: number; worker: number; pid: number; op: string; run?: string; outcome: OutcomeSummary; read?: ReadSummary; latency_ms: number; group?: number };

export type HistoryLine =
  | InvokeLine
  | CompletionLine
  | { k: 'plan'; t_ms: number; plan: RunPlanLine }
  | { k: 'nemesis'; t_ms: number; action: 'inject' | 'heal'; fault: string; target: string; detail?: string; pid?: number }
  | { k: 'phase'; t_ms: number; phase: string }
  | { k: 'worker'; t_ms: number; worker: number; pid: number; event: 'spawned' | 'exited'; host: string };

/** What a run is, as the checker needs it (the expectation is computed from this, not from REMIT). */
export type RunPlanLine =
  | { runId: string; kind: 'reference'; input: { orderId: string; amountCents: number }; leaveParked: boolean }
  | { runId: string; kind: 'generated'; scenario: string }
  | { runId: string; kind: 'fork'; source: string; after: string; input: { orderId: string; amountCents: number } };

export class HistoryWriter {
  private readonly fd: number;
  private nextOpId = 1;
  readonly startedAt = performance.now();

  constructor(readonly path: string) {
    this.fd = fs.openSync(path, 'a');
  }

  now(): number {
    return Math.round((performance.now() - this.startedAt) * 1000) / 1000;
  }

  newOpId(): number {
    return this.nextOpId++;
  }

  write(line: HistoryLine): void {
    fs.writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  close(): void {
    fs.fsyncSync(this.fd);
    fs.closeSync(this.fd);
  }
}

export function readHistory(path: string): HistoryLine[] {
  const text = fs.readFileSync(path, 'utf8');
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l, i) => {
      try {
        return JSON.parse(l) as HistoryLine;
      } catch {
        throw new Error(`history ${path}, line ${i + 1}: not JSON`);
      }
    });
}
