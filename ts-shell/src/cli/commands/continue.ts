import type { Command } from 'commander';
import { openSession, parseMilliseconds, parseSeq, print } from '../context.js';
import { describeResult, exitCodeForResult } from '../output.js';
import type { CommandModule } from '../registry.js';
import { drivingRun } from '../stalled.js';

export const continueCommand: CommandModule = {
  name: 'continue',
  register(program: Command) {
    program
      .command('continue')
      .description('drive an existing run on from its durable head (after a crash or an error)')
      .argument('<runId>', 'the run')
      .option('--from <seq>', "refuse unless <seq> is the run's head, the seq of its last record (of any kind: a checkpoint, a park, an effect attempt, RUN_COMPLETED; see `remit inspect`); an earlier seq needs `remit fork` at a checkpoint")
      .option('--wait <ms>', 'wait up to <ms> for an effect attempt in flight in another process (its lease) instead of exiting with code 4')
      .action(async (runId: string, opts: { from?: string; wait?: string }, command: Command) => {
        const fromSeq = opts.from === undefined ? undefined : parseSeq(opts.from, '--from');
        const waitForEffectMs = opts.wait === undefined ? undefined : parseMilliseconds(opts.wait, '--wait');
        const session = await openSession(command, { workflows: 'required' });
        try {
          drivingRun(session.remit, runId);
          const result = await session.remit.continueRun(runId, {
            ...(fromSeq === undefined ? {} : { fromSeq }),
            ...(waitForEffectMs === undefined ? {} : { waitForEffectMs }),
          });
          print(session.options, result, () => describeResult(result));
          process.exitCode = exitCodeForResult(result);
        } finally {
          await session.close();
        }
      });
  },
};
