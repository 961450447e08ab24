/**
 * The adapter protocol: JSON lines over stdio. The harness writes one request per line to the
 * adapter's stdin; the adapter writes one reply per request (same `id`) and, unprompted, event
 * lines (`{"event":"fault",...}`) to stdout. Anything an adapter writes is validated here before a
 * checker sees it. The full specification, for adapters in other languages: conformance/README.md.
 */
import { z } from 'zod';

export const PROTOCOL_VERSION = 1;

export const OutcomeSchema = z.object({
  outcome: z.enum(['parked', 'completed', 'failed', 'refused', 'error', 'forked']),
  state: z.unknown().optional(),
  /** For `fork`: the id under which the adapter addresses the new run. */
  runId: z.string().optional(),
  refusal: z
    .object({
      /** CONFLICT: another writer appended first (a lost conditional append); nothing was written. */
      code: z.enum(['ALREADY_CONSUMED', 'NOT_PARKED', 'INVALID_VALUE', 'IMPLICIT_FORK', 'DEFINITION_MISMATCH', 'CONFLICT', 'OTHER']),
      message: z.string(),
      field: z.string().optional(),
      /** The system's own error code and reason, when it has them (e.g. REMIT_VALUE_UNFAITHFUL, CHANGED_BY_JSON). */
      systemCode: z.string().optional(),
      reason: z.string().optional(),
    })
    .optional(),
  error: z
    .object({
      kind: z.enum(['injected', 'store', 'validation', 'other']),
      message: z.string(),
      field: z.string().optional(),
      systemCode: z.string().optional(),
      reason: z.string().optional(),
    })
    .optional(),
});
export type Outcome = z.infer<typeof OutcomeSchema>;

export const StoredRecordViewSchema = z.object({
  /** Identity of the record in its store (REMIT: the seq; a table store: table + primary key). */
  id: z.string(),
  /** The record's raw bytes as the store keeps them, hex. Byte comparisons use this. */
  hex: z.string(),
});

export const RunViewSchema = z.object({
  runId: z.string(),
  exists: z.boolean(),
  records: z.array(StoredRecordViewSchema),
  /** Decoded records with run ids, checkpoint ids and timestamps masked (fork comparison). */
  normalized: z.array(z.unknown()),
  status: z.enum(['absent', 'empty', 'running', 'parked', 'completed', 'failed', 'invalid']),
  integrity: z.union([
    z.object({ ok: z.literal(true) }),
    z.object({ ok: z.literal(false), record: z.string(), message: z.string() }),
  ]),
  completedNodes: z.array(z.string()),
  effectsDone: z.array(z.string()),
  /** Durable resume claims of the run's interrupt. */
  claims: z.number().int().min(0),
  states: z.array(z.unknown()),
  headState: z.unknown(),
  /** What recovery says happens next, e.g. "AWAIT_RESUME approval", "NONE" when finished. */
  nextAction: z.string(),
  /** Idempotency keys of the effect instances whose completion is durable (generated workflows). */
  effectKeysDone: z.array(z.string()).optional(),
  /** Digest of the recovered result per recovery implementation (e.g. wasm and reference cores). */
  recoveries: z.record(z.string(), z.string()),
});
export type RunView = z.infer<typeof RunViewSchema>;

const SupportSchema = z.union([
  z.object({ supported: z.literal(true), where: z.string() }),
  z.object({ supported: z.literal(false), reason: z.string() }),
]);
export type Support = z.infer<typeof SupportSchema>;

export const HelloResultSchema = z.object({
  protocol: z.literal(PROTOCOL_VERSION),
  system: z.string(),
  variant: z.string(),
  versions: z.record(z.string(), z.string()),
  points: z.record(z.string(), SupportSchema),
  faultKinds: z.record(z.string(), SupportSchema),
  concurrency: z.record(z.string(), SupportSchema),
  fork: SupportSchema,
  /** Continuing a run from an older checkpoint without a fork (the fork-intent probe); absent means supported. */
  continueFrom: SupportSchema.optional(),
});
export type HelloResult = z.infer<typeof HelloResultSchema>;

export const CorruptionProbeSchema = z.object({
  detected: z.boolean(),
  message: z.string(),
  corruptedRunId: z.string(),
  corruptedRecord: z.string(),
  /** Typed fields of the system's error, when it has them. */
  reportedRunId: z.string().nullable(),
  reportedRecord: z.string().nullable(),
});
export type CorruptionProbe = z.infer<typeof CorruptionProbeSchema>;

export const InvalidStateProbeSchema = z.object({ outcome: OutcomeSchema, view: RunViewSchema });
export type InvalidStateProbe = z.infer<typeof InvalidStateProbeSchema>;

export const DefinitionChangeProbeSchema = z.object({
  change: z.string(),
  changedNode: z.string(),
  outcome: OutcomeSchema,
});
export type DefinitionChangeProbe = z.infer<typeof DefinitionChangeProbeSchema>;

export const ResumeManySchema = z.object({ outcomes: z.array(OutcomeSchema) });
export const ContinueManySchema = ResumeManySchema;

export const FaultEventSchema = z.object({
  event: z.literal('fault'),
  point: z.string(),
  kind: z.enum(['sigkill', 'throw', 'store-error']),
});
export type FaultEvent = z.infer<typeof FaultEventSchema>;

/** A server-side barrier (hosts cells): resumers wait at it until the harness opens it. */
export interface BarrierRef {
  key: number;
}

export const BarrierCountSchema = z.object({ waiting: z.number().int().min(0) });

export type Request =
  | { op: 'hello' }
  /**
   * replica: which sequencer this process plays in the cell ("primary", "secondary", "worker-3",
   * "recoverer-0", ...). A process that restarts in the same role is the same replica restarted; two
   * live processes never share one. Systems without such an identity ignore it.
   */
  | { op: 'open'; storePath: string; sinkPath: string; replica?: string }
  /** occurrence: fire at the n-th time the point is reached (default 1). */
  | { op: 'arm'; fault: { point: string; kind: 'sigkill' | 'throw' | 'store-error'; occurrence?: number } | null }
  /** Generated workflows (harness/generated/): build this workflow and register it under its name. */
  | { op: 'define'; workflow: unknown }
  /** workflow: a defined generated workflow (default: the reference workflow); tagged: values use the tags of harness/generated/spec.ts. */
  | { op: 'start'; runId: string; input: unknown; workflow?: string; tagged?: boolean }
  /** park: address the run's park number `park` (0-based) instead of its last one. */
  | { op: 'resume'; runId: string; value: unknown; barrier?: BarrierRef; tagged?: boolean; park?: number }
  | { op: 'resumeMany'; runId: string; values: unknown[] }
  /** k concurrent continue calls in this one process (the recoverer cells, in-process mode). */
  | { op: 'continueMany'; runId: string; count: number }
  /** holdBeforeAppend: wait at that barrier just before the first append (the recover race). */
  | { op: 'continue'; runId: string; barrier?: BarrierRef; holdBeforeAppend?: BarrierRef }
  /** Continue every running run of the store (a replica's start-up); the soak's restarted workers. */
  | { op: 'recoverAll'; waitForEffectMs?: number }
  /** hosts cells only: close, count the waiters of, or open a barrier (served by the primary). */
  | { op: 'barrier'; action: 'hold' | 'count' | 'release'; key: number }
  /** after: the checkpoint of the `occurrence`-th (default 1) completion of that node. */
  | { op: 'continueFrom'; runId: string; after: string; occurrence?: number }
  | { op: 'fork'; sourceRunId: string; after: string; targetRunId: string; intent: unknown; occurrence?: number }
  | { op: 'readStore'; runId: string }
  | { op: 'probe'; kind: 'corruption'; runId: string; pick: number }
  | { op: 'probe'; kind: 'invalid-state'; runId: string; input: unknown }
  | { op: 'probe'; kind: 'definition-change'; runId: string; input: unknown }
  | { op: 'shutdown' };

export const ReplySchema = z.union([
  z.object({ id: z.number().int(), ok: z.literal(true), result: z.unknown() }),
  z.object({ id: z.number().int(), ok: z.literal(false), error: z.object({ message: z.string() }) }),
]);
export type Reply = z.infer<typeof ReplySchema>;

export class ProtocolError extends Error {
  constructor(
    readonly adapter: string,
    readonly op: string,
    message: string,
  ) {
    super(`adapter ${adapter}, op ${op}: ${message}`);
    this.name = 'ProtocolError';
  }
}

/** Validate an adapter's result with `schema`, naming the adapter, op and the bad field. */
export function parseResult<T>(schema: z.ZodType<T>, adapter: string, op: string, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? '' : `${issue.path.join('.') || '(root)'}: ${issue.message}`;
    throw new ProtocolError(adapter, op, `malformed result (${where})`);
  }
  return parsed.data;
}
