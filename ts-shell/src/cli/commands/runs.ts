import type { Command } from 'commander';
import { table } from '../../inspect.js';
import { openSession, print } from '../context.js';
import type { RunSummary } from '../../remit.js';
import type { CommandModule } from '../registry.js';

/** One line on a damaged run: where, how, and the command that repairs it (or that nothing will). */
function damageNote(run: RunSummary): string {
  const d = run.damage;
  if (d === undefined) return '';
  const what = `${d.code} at seq ${d.seq}`;
  return d.repairable ? `${what}: remit repair ${run.runId}` : `${what}: not repairable, see remit inspect ${run.runId}`;
}

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
              r.runId, r.workflow, r.status, String(r.headSeq), new Date(r.updatedAtMs).toISOString(), r.interruptId ?? damageNote(r),
            ]);
            return table(['run', 'workflow', 'status', 'head', 'updated', 'awaiting / damage'], rows, [false, false, false, true]).join('\n');
          });
        } finally {
          await session.close();
        }
      });
  },
};
