import type { Command } from 'commander';
import { count, shown } from '../../display.js';
import { suggestCommand } from '../../errors.js';
import { openSession, print } from '../context.js';
import type { CommandModule } from '../registry.js';

export const repairCommand: CommandModule = {
  name: 'repair',
  register(program: Command) {
    program
      .command('repair')
      .description('remove a torn or empty last record of a damaged run, only when losing it is the same as a crash before it was written (refuses otherwise; exit 7); on a sound log, correct a status hint and delete a stored recovery summary that disagree with it')
      .argument('<runId>', 'the damaged run (see `remit runs` and `remit inspect`)')
      .action(async (runId: string, _opts: unknown, command: Command) => {
        const session = await openSession(command, { workflows: 'optional' });
        try {
          const repaired = await session.remit.repair(runId);
          print(session.options, repaired, () =>
            repaired.removedSeq === null
              ? shown`run ${runId}: ${repaired.note}`
              : [
                  shown`run ${runId}: removed the damaged record at seq ${repaired.removedSeq}` +
                    `${repaired.removedKind === null ? '' : ` (kind ${repaired.removedKind})`}, ${count(repaired.removedBytes, 'byte')}; head seq ${repaired.headSeq}`,
                  shown`  ${repaired.note}`,
                  shown`  continue with: ${suggestCommand('continue', runId)}`,
                ].join('\n'),
          );
        } finally {
          await session.close();
        }
      });
  },
};
