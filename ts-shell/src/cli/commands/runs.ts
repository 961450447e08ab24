import type { Command } from 'commander';
import { suggestCommand } from '../../errors.js';
import { isoTime, table } from '../../inspect.js';
import { openSession, print } from '../context.js';
import type { RunSummary } from '../../remit.js';
import { ExitCode } from '../exit-codes.js';
import type { CommandModule } from '../registry.js';

/** One line on a damaged run: where, how, and the command that repairs it (or that nothing will). */
function damageNote(run: RunSummary): string {
  const d = run.damage;
  if (d === undefined) return '';
  const what = `${d.code} at seq ${d.seq}`;
  if (d.repairable) return `${what}: ${suggestCommand('repair', run.runId)}`;
  return d.code === 'NO_RECORDS' ? `${what}: ${d.advice}` : `${what}: not repairable, see ${suggestCommand('inspect', run.runId)}`;
}

export const runsCommand: CommandModule = {
  name: 'runs',
  register(program: Command) {
    program
      .command('runs')
      .description('list the runs in the database with their status; exit 7 when any is damaged')
      .action(async (_opts: unknown, command: Command) => {
        const session = await openSession(command, { workflows: 'optional' });
        try {
          const runs = await session.remit.runs();
          print(session.options, runs, () => {
            if (runs.length === 0) return `no runs in ${session.dbPath}`;
            const rows = runs.map((r) => [
              r.runId, r.workflow, r.status, String(r.headSeq), isoTime(r.updatedAtMs), r.interruptId ?? damageNote(r),
            ]);
            return table(['run', 'workflow', 'status', 'head', 'updated', 'awaiting / damage'], rows, [false, false, false, true]).join('\n');
          });
          if (runs.some((r) => r.damage !== undefined)) process.exitCode = ExitCode.LOG_DAMAGED;
        } finally {
          await session.close();
        }
      });
  },
};
