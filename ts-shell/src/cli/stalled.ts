/**
 * A command that stops for a promise that never settles, with nothing left to run (main.ts,
 * whenStalled), names the run it was driving and that run's durable head: a run id the library
 * generated is printed nowhere else, and without it the run cannot be inspected, continued or
 * repaired.
 */

import { suggestCommand } from '../errors.js';
import type { Remit } from '../remit.js';

/** The run the command drives (run, resume, continue, fork --continue), once it knows its id. */
let driven: { remit: Remit; runId: string } | undefined;

export function drivingRun(remit: Remit, runId: string): void {
  driven = { remit, runId };
}

/** Where a stalled run stands in its durable log, when that could be read. */
export interface StalledAt {
  headSeq: number;
  /**
   * The node the durable log is at: the next node its last record names, else that record's own
   * (steps written together later, when grouped, are not in the log yet).
   */
  node?: string;
}

export class StalledError extends Error {
  readonly code = 'CLI_STALLED';

  constructor(
    message: string,
    readonly runId?: string,
    readonly at?: StalledAt,
  ) {
    super(message);
    this.name = 'StalledError';
  }

  toJSON(): Record<string, unknown> {
    return { name: this.name, code: this.code, message: this.message, ...(this.runId === undefined ? {} : { runId: this.runId }), ...this.at };
  }
}

const NEVER_FINISHED =
  'the command never finished: it waits for a promise that never settles, and nothing is left to run (node code, a hook or a store returning a promise that never settles?)';

/**
 * The stall, naming the run driven and, when `readHead`, its durable head (a read of the store:
 * when that read itself never settles, main.ts asks again without it).
 */
export async function stalledError(readHead: boolean): Promise<StalledError> {
  if (driven === undefined) return new StalledError(NEVER_FINISHED);
  const { remit, runId } = driven;
  const at = readHead ? await durableHead(remit, runId) : undefined;
  const where = at === undefined ? '' : `, head seq ${at.headSeq}${at.node === undefined ? '' : `, at node ${at.node}`}`;
  const next = `see it with \`${suggestCommand('inspect', runId)}\`, drive it on with \`${suggestCommand('continue', runId)}\``;
  return new StalledError(`${NEVER_FINISHED}; run ${runId}${where}: ${next}`, runId, at);
}

/** The run's head seq and node as its durable log says; undefined when it cannot be read (no record yet). */
async function durableHead(remit: Remit, runId: string): Promise<StalledAt | undefined> {
  try {
    const inspection = await remit.inspect(runId);
    const last = inspection.records[inspection.records.length - 1];
    const node = last?.next ?? last?.node ?? undefined;
    return { headSeq: inspection.headSeq, ...(node === undefined || node === null ? {} : { node }) };
  } catch {
    return undefined;
  }
}
