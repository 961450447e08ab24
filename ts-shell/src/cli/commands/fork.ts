import type { Command } from 'commander';
import { shown } from '../../display.js';
import { DefinitionMismatchError, RunIdInvalidError, suggestCommand, UnknownWorkflowError } from '../../errors.js';
import { checkRunId } from '../../ids.js';
import type { ForkResult } from '../../remit.js';
import { openSession, parseSeq, print, reportFields, type CliSession } from '../context.js';
import { describeResult, exitCodeForResult } from '../output.js';
import type { CommandModule } from '../registry.js';
import { drivingRun } from '../stalled.js';

/**
 * `fork --continue` drives the fork under the loaded workflows: refuse before anything is written
 * when they do not register the definition the source run was started under (the fork is a run
 * of that definition: UnknownWorkflowError, or DefinitionMismatchError for another definition of
 * the name), so that a retry under the right module does not meet a fork it never heard of, and
 * no fork is left that the suggested `continue` could not drive either.
 */
async function checkSourceWorkflow(session: CliSession, runId: string): Promise<void> {
  try {
    await session.remit.workflowOf(runId);
  } catch (error) {
    if (error instanceof UnknownWorkflowError || error instanceof DefinitionMismatchError) {
      error.message += '; --continue drives the fork under this definition, so no fork was created';
    }
    throw error;
  }
}

/** The field the library's RunIdInvalidError names for fork's new run id, which the CLI takes as --run-id. */
const LIBRARY_NEW_RUN_ID = 'options.newRunId of fork';

/**
 * A refused --run-id names the flag the operator typed, as `run --run-id` does, not the library's
 * `options.newRunId of fork`: the id's own rule is checked before the store is opened; whether
 * its effect keys fit is known only from the source's node table, read by fork, whose refusal is
 * restated under the flag (same class, code and problem).
 */
async function forkNamingFlag<T>(newRunId: string | undefined, fork: () => Promise<T>): Promise<T> {
  if (newRunId === undefined) return fork();
  try {
    return await fork();
  } catch (error) {
    if (!(error instanceof RunIdInvalidError) || error.field !== LIBRARY_NEW_RUN_ID) throw error;
    throw new RunIdInvalidError(newRunId, error.problem, '--run-id', error.runId === undefined ? {} : { runId: error.runId });
  }
}

/**
 * An error of continuing a fork that was written: it says so, and how to continue the fork, so
 * that a retry continues it instead of forking again (into an id now taken). Keeps the error's
 * type and code (and so the exit code).
 */
function forkCreated(error: unknown, fork: ForkResult): unknown {
  // Continuing it may have recorded steps before the error (an effect's intent and released
  // attempt): the fork is then a running run recoverAll drives on, not one that waits for continue.
  const note = `the fork ${fork.runId} of ${fork.sourceRunId} at seq ${fork.checkpointSeq} was created, and continuing it stopped at this error ` +
    `(what it recorded before is kept, and ${suggestCommand('inspect', fork.runId)} shows it; a fork that recorded more than its FORKED record ` +
    `is a running run, which recoverAll drives on); continue with: ${suggestCommand('continue', fork.runId)}`;
  const reported = error instanceof Error ? error : new Error(String(error), { cause: error });
  reported.message = `${reported.message}; ${note}`;
  // With --json, the fork written is a field of its own beside the error (main.ts).
  reportFields.set(reported, { forked: fork });
  return reported;
}

export const forkCommand: CommandModule = {
  name: 'fork',
  register(program: Command) {
    program
      .command('fork')
      .description('create a new run from a checkpoint of <runId> (the source is left byte-identical)')
      .argument('<runId>', 'the source run')
      .argument('<seq>', 'seq of a checkpoint record (RUN_STARTED or NODE_COMPLETED; see `remit inspect`)')
      .option('--intent <text>', 'why this fork exists (recorded in the FORKED record)', 'forked from the CLI')
      .option('-r, --run-id <id>', 'id of the new run (default: <runId>.fork-<hex>)')
      .option('--continue', 'drive the new run right away (refused, with nothing written, unless --workflow registers the definition the source run was started under)')
      .action(async (runId: string, seqText: string, opts: { intent: string; runId?: string; continue?: boolean }, command: Command) => {
        const seq = parseSeq(seqText, '<seq>');
        if (opts.runId !== undefined) checkRunId(opts.runId, '--run-id', { runId });
        const session = await openSession(command, { workflows: opts.continue ? 'required' : 'optional' });
        try {
          if (opts.continue) await checkSourceWorkflow(session, runId);
          const fork = await forkNamingFlag(opts.runId, () => session.remit.fork(runId, seq, { intent: opts.intent, ...(opts.runId !== undefined ? { newRunId: opts.runId } : {}) }));
          if (!opts.continue) {
            print(session.options, fork, () => shown`forked ${fork.sourceRunId} at seq ${fork.checkpointSeq} into ${fork.runId}\n  continue with: ${suggestCommand('continue', fork.runId)}`);
            return;
          }
          let result;
          drivingRun(session.remit, fork.runId);
          try {
            result = await session.remit.continueRun(fork.runId);
          } catch (error) {
            throw forkCreated(error, fork);
          }
          print(session.options, { fork, result }, () => `${shown`forked ${fork.sourceRunId} at seq ${fork.checkpointSeq} into ${fork.runId}`}\n${describeResult(result)}`);
          process.exitCode = exitCodeForResult(result);
        } finally {
          await session.close();
        }
      });
  },
};
