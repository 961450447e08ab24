import type { Command } from 'commander';
import { renderInspection } from '../../inspect.js';
import { openSession, print } from '../context.js';
import type { CommandModule } from '../registry.js';

export const inspectCommand: CommandModule = {
  name: 'inspect',
  register(program: Command) {
    program
      .command('inspect')
      .description('show a run\'s log: node, kind, commit time, sizes, keys, and what comes next')
      .argument('<runId>', 'the run')
      .action(async (runId: string, _opts: unknown, command: Command) => {
        const session = await openSession(command, { workflows: 'optional' });
        try {
          const inspection = await session.remit.inspect(runId);
          print(session.options, inspection, () => renderInspection(inspection));
          if (inspection.error) process.exitCode = 7;
        } finally {
          await session.close();
        }
      });
  },
};
