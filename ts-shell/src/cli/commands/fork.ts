import type { Command } from 'commander';
import { shown } from '../../display.js';
import { suggestCommand } from '../../errors.js';
import { openSession, parseSeq, print } from '../context.js';
import { describeResult, exitCodeForResult } from '../output.js';
import type { CommandModule } from '../registry.js';

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
      .option('--continue', 'drive the new run right away')
      .action(async (runId: string, seqText: string, opts: { intent: string; runId?: string; continue?: boolean }, command: Command) => {
        const seq = parseSeq(seqText, '<seq>');
        const session = await openSession(command, { workflows: opts.continue ? 'required' : 'optional' });
        try {
          const fork = await session.remit.fork(runId, seq, { intent: opts.intent, ...(opts.runId !== undefined ? { newRunId: opts.runId } : {}) });
          if (!opts.continue) {
            print(session.options, fork, () => shown`forked ${fork.sourceRunId} at seq ${fork.checkpointSeq} into ${fork.runId}\n  continue with: ${suggestCommand('continue', fork.runId)}`);
            return;
          }
          const result = await session.remit.continueRun(fork.runId);
          print(session.options, { fork, result }, () => `${shown`forked ${fork.sourceRunId} at seq ${fork.checkpointSeq} into ${fork.runId}`}\n${describeResult(result)}`);
          process.exitCode = exitCodeForResult(result);
        } finally {
          await session.close();
        }
      });
  },
};
