import type { Command } from 'commander';
import { shown } from '../../display.js';
import { OptionInvalidError, shellWord, suggestCommand } from '../../errors.js';
import { isoTime, table } from '../../inspect.js';
import { openSession, parseLimit, print, UsageError } from '../context.js';
import { describeStoredHint, type ListedStatus, type RunSummary } from '../../remit.js';
import { ExitCode } from '../exit-codes.js';
import { isUnreadableRunCode } from '../../sequencer/log-health.js';
import type { CommandModule } from '../registry.js';

/** One line on a damaged run: where, how, and the command that repairs it (or that nothing will). */
function damageNote(run: RunSummary): string {
  const d = run.damage;
  if (d === undefined) return '';
  const what = `${d.code} at seq ${d.seq}`;
  if (d.repairable) return `${what}: ${suggestCommand('repair', run.runId)}`;
  // A run the store cannot read cannot be inspected either: its advice says what to do instead.
  if (d.code === 'NO_RECORDS' || isUnreadableRunCode(d.code)) return `${what}: ${d.advice}`;
  return `${what}: not repairable, see ${suggestCommand('inspect', run.runId)}`;
}

/** On a run whose stored status hint disagrees with its log: the hint and the command that corrects it. */
function hintNote(run: RunSummary): string {
  if (run.statusHintAgrees !== false) return '';
  return `status hint ${describeStoredHint({ statusHint: run.statusHint ?? null, ...(run.statusHintInvalid === undefined ? {} : { statusHintInvalid: run.statusHintInvalid }) })} disagrees with the log (${run.status}): ${suggestCommand('repair', run.runId)}`;
}

/**
 * On a fork nobody continued: it waits for `remit continue` (recoverAll leaves it alone). On any
 * other running run: a process may be driving it now, or it crashed, and then `remit continue`
 * (or recoverAll at start-up) drives it on.
 */
function continueNote(run: RunSummary): string {
  if (run.undrivenFork === true) return `fork, not continued: ${suggestCommand('continue', run.runId)}`;
  return run.status === 'running' ? `if no process is driving it (after a crash): ${suggestCommand('continue', run.runId)}` : '';
}

/** Whether `runs` exits 7: a damaged run, or a status hint that disagrees with its log (as scrub). */
function hasProblem(run: RunSummary): boolean {
  return run.damage !== undefined || run.statusHintAgrees === false;
}

export const runsCommand: CommandModule = {
  name: 'runs',
  register(program: Command) {
    program
      .command('runs')
      .description('list the runs in the database with their status; exit 7 when any is damaged or its status hint disagrees with its log')
      .option('--limit <n>', 'at most <n> runs, in order of creation (a page: each listed run\'s log is read, so list a large database in pages)')
      .option('--after <runId>', 'only the runs after this one: the last run of the previous page')
      .option('--status <statuses>', 'only the runs of these statuses, comma-separated or repeated (running, parked, completed, failed, damaged); every run passed over is still read',
        (value: string, previous?: string) => (previous === undefined ? value : `${previous},${value}`))
      .action(async (opts: { limit?: string; after?: string; status?: string }, command: Command) => {
        const limit = opts.limit === undefined ? undefined : parseLimit(opts.limit, '--limit');
        const status = opts.status === undefined ? undefined : (opts.status.split(',').map((one) => one.trim()) as ListedStatus[]);
        const session = await openSession(command, { workflows: 'optional' });
        try {
          const asked = { ...(limit === undefined ? {} : { limit }), ...(opts.after === undefined ? {} : { after: opts.after }), ...(status === undefined ? {} : { status }) };
          const runs = await session.remit.runs(asked).catch((error: unknown) => {
            // Named as the command line names it, not as the library's option.
            if (error instanceof OptionInvalidError && error.option === 'after') throw new UsageError(`--after must name a listed run (the last run of the previous page), got ${JSON.stringify(opts.after)}`);
            if (error instanceof OptionInvalidError && error.option === 'status') {
              throw new UsageError(`--status takes statuses separated by commas, each one of running, parked, completed, failed, damaged; got ${JSON.stringify(opts.status)}`);
            }
            throw error;
          });
          print(session.options, runs, () => {
            const which = opts.status === undefined ? 'runs' : `${opts.status} runs`;
            if (runs.length === 0) return opts.after === undefined ? shown`no ${which} in ${session.dbPath}` : shown`no ${which} after ${opts.after} in ${session.dbPath}`;
            const statusOption = opts.status === undefined ? '' : ` ${shellWord(`--status=${opts.status}`)}`;
            const more = limit !== undefined && runs.length === limit ? [`more runs may follow: ${suggestCommand('runs')} --limit ${limit}${statusOption} ${shellWord(`--after=${runs[runs.length - 1]!.runId}`)}`] : [];
            const rows = runs.map((r) => [
              // A run with no intact record has no head (headSeq -1 in --json): shown as '-'.
              r.runId, r.workflow, r.status, r.headSeq < 0 ? '-' : String(r.headSeq), isoTime(r.updatedAtMs), [r.interruptId ?? damageNote(r), continueNote(r), hintNote(r)].filter((note) => note !== '').join('; '),
            ]);
            return [...table(['run', 'workflow', 'status', 'head', 'updated', 'awaiting / damage / hint'], rows, [false, false, false, true]), ...more].join('\n');
          });
          if (runs.some(hasProblem)) process.exitCode = ExitCode.LOG_DAMAGED;
        } finally {
          await session.close();
        }
      });
  },
};
