import type { Command } from 'commander';
import { openSession, parseJsonArgument, print } from '../context.js';
import { describeResult, exitCodeForResult } from '../output.js';
import type { CommandModule } from '../registry.js';
import { drivingRun } from '../stalled.js';

export const resumeCommand: CommandModule = {
  name: 'resume',
  register(program: Command) {
    program
      .command('resume')
      .description('resume a parked interrupt with a value (validated, then claimed once), and drive the run on')
      .argument('<runId>', 'the run')
      .argument('<interruptId>', 'the parked interrupt, as shown by run/inspect (node@seq)')
      .argument('<value>', 'the resume value as JSON, or @file.json')
      .action(async (runId: string, interruptId: string, valueText: string, _opts: unknown, command: Command) => {
        const value = parseJsonArgument(valueText, '<value>');
        const session = await openSession(command, { workflows: 'required' });
        try {
          drivingRun(session.remit, runId);
          const result = await session.remit.resume(runId, interruptId, value);
          print(session.options, result, () => describeResult(result));
          process.exitCode = exitCodeForResult(result);
        } finally {
          await session.close();
        }
      });
  },
};
