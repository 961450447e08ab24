import type { Command } from 'commander';
import { table } from '../../inspect.js';
import { openSession, print } from '../context.js';
import type { CommandModule } from '../registry.js';

export const runsCommand: CommandModule = {
  name: 'runs',
  register(program: Command) {
    program
      .command('runs')
      .description('list the runs in the database with their status')
      .action(async (_opts: unknown, command: Command) => {
        const session = await openSession(command, { workflows: 'optional' });
        try {
          const runs = await session.remit.runs();
          print(session.options, runs, () => {
            if (runs.length === 0) return `no runs in ${session.dbPath}`;
            const rows = runs.map((r) => [
              r.runId, r.workflow, r.status, String(r.headSeq), new Date(r.updatedAtMs).toISOString(), r.interruptId ?? '',
            ]);
            return table(['run', 'workflow', 'status', 'head', 'updated', 'awaiting'], rows, [false, false, false, true]).join('\n');
          });
        } finally {
          await session.close();
        }
      });
  },
};
