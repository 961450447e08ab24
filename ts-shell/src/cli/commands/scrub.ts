import type { Command } from 'commander';
import { count, displayText } from '../../display.js';
import { RemitError, suggestCommand } from '../../errors.js';
import { describeStoredHint, type ScrubReport } from '../../remit.js';
import { openSession, print, UsageError } from '../context.js';
import { hintDisagreement } from '../output.js';
import { ExitCode } from '../exit-codes.js';
import type { CommandModule } from '../registry.js';
import type { Store } from '../../store/store.js';

/** Whether a report shows a problem: a damaged record, a stored summary or a status hint that disagrees with the log. */
function hasProblem(report: ScrubReport): boolean {
  return report.damage !== null || report.summaryAgrees === false || report.statusHintAgrees === false || report.unlisted === true;
}

/** One line per run: what was found first (naming the damaged record's seq), then what was checked. */
function describeReport(report: ScrubReport): string {
  const line = describeLog(report);
  if (report.unlisted !== true) return line;
  return `run ${report.runId}: NOT LISTED: its records are stored without a listing row (deleted by hand?), so runs and recoverAll do not see it: ${suggestCommand('repair', report.runId)} lists it again; ${line.replace(/^run [^:]*: /, '')}`;
}

function describeLog(report: ScrubReport): string {
  const checked = `${count(report.records, 'record')}, ${count(report.logBytes, 'byte')}`;
  const summary =
    report.summaryRecords === null ? 'no stored summary'
    : `stored summary (${count(report.summaryRecords, 'record')}) ${report.summaryAgrees ? 'agrees' : 'disagrees'}`;
  const d = report.damage;
  if (d !== null) return `run ${report.runId}: DAMAGED at seq ${d.seq}: ${d.code} (${d.kind}): ${d.advice}; ${checked}, ${summary}`;
  if (report.summaryAgrees === false) {
    const hint = report.statusHintAgrees === false ? `; STATUS HINT DISAGREES: ${hintDisagreement(report.runId, report, report.logStatus ?? '?')}` : '';
    return `run ${report.runId}: SUMMARY DISAGREES: the stored summary (${count(report.summaryRecords ?? 0, 'record')}) is not the one the core computes from the log (docs/guide.md, "Fresh-process resume"): ${suggestCommand('repair', report.runId)} deletes it${hint}; ${checked}`;
  }
  if (report.statusHintAgrees === false) {
    return `run ${report.runId}: STATUS HINT DISAGREES: ${hintDisagreement(report.runId, report, report.logStatus ?? '?')}; ${checked}, ${summary}`;
  }
  const hint =
    report.statusHintAgrees === true ? `status hint ${report.statusHint} agrees`
    : report.statusHint === null && report.statusHintInvalid === undefined ? 'no status hint'
    : `status hint ${describeStoredHint(report)} not compared`;
  return `run ${report.runId}: ok, ${checked}, ${summary}, ${hint}`;
}

/**
 * What `scrub --all` scrubs: every listed run, then the runs whose records are stored without a
 * listing (SQLite). A search for those that fails with a store error (a damaged database page
 * under the records' index, SQLITE_CORRUPT) is reported beside the listed runs' reports
 * (`unlistedSearch`), never instead of them: a damaged database is when scrub is needed most.
 */
export async function runsToScrub(store: Pick<Store, 'listRuns' | 'listUnlistedRuns'>): Promise<{ runIds: string[]; unlistedSearch: RemitError | null }> {
  const runIds = (await store.listRuns()).map((listing) => listing.runId);
  try {
    // One at a time, not push(...unlisted): there may be more of them than a call takes arguments.
    for (const id of (await store.listUnlistedRuns?.()) ?? []) runIds.push(id);
  } catch (error) {
    if (!(error instanceof RemitError)) throw error;
    return { runIds, unlistedSearch: error };
  }
  return { runIds, unlistedSearch: null };
}

export const scrubCommand: CommandModule = {
  name: 'scrub',
  register(program: Command) {
    program
      .command('scrub')
      .description('re-verify every record of a run (or of every run, --all), its stored recovery summary and its status hint against the whole log; exit 7 when any run is damaged or its summary or status hint disagrees')
      .argument('[runId]', 'the run to scrub')
      .option('--all', 'scrub every run in the database', false)
      .action(async (runId: string | undefined, opts: { all: boolean }, command: Command) => {
        if ((runId === undefined) === !opts.all) throw new UsageError('scrub takes a run id or --all (not both): a run id scrubs that run, --all every run in the database');
        const session = await openSession(command, { workflows: 'optional' });
        try {
          if (runId !== undefined) {
            const report = await session.remit.scrub(runId);
            // A report is one line: escaped whole, so that the log's text in it prints no control character (display.ts).
            print(session.options, report, () => displayText(describeReport(report)));
            if (hasProblem(report)) process.exitCode = ExitCode.LOG_DAMAGED;
            return;
          }
          // One run that cannot be scrubbed (a store error reading it) is a problem of that run: the
          // others are still scrubbed and reported. (A run listed without records is scrubbed: its
          // report names the damage, NO_RECORDS.)
          const reports: ScrubReport[] = [];
          const failures: { runId: string; error: unknown }[] = [];
          const { runIds, unlistedSearch } = await runsToScrub(session.remit.store);
          for (const id of runIds) {
            try {
              reports.push(await session.remit.scrub(id));
            } catch (error) {
              if (!(error instanceof RemitError)) throw error;
              failures.push({ runId: id, error: error.toJSON() });
            }
          }
          const problems = reports.filter(hasProblem);
          const scrubbed = reports.length + failures.length;
          const problemCount = problems.length + failures.length + (unlistedSearch === null ? 0 : 1);
          const result = {
            runs: scrubbed, problems: [...problems.map((r) => r.runId), ...failures.map((f) => f.runId)], reports, failures,
            unlistedSearch: unlistedSearch === null ? null : unlistedSearch.toJSON(),
          };
          print(session.options, result, () =>
            [
              ...(unlistedSearch === null ? [] : [`runs stored without a listing NOT SEARCHED FOR: ${unlistedSearch.code}: ${unlistedSearch.message}`]),
              ...problems.map(describeReport),
              ...failures.map((f) => `run ${f.runId}: NOT SCRUBBED: ${(f.error as { code: string }).code}: ${(f.error as { message: string }).message}`),
              `scrubbed ${count(scrubbed, 'run')} in ${session.dbPath}: ${problemCount === 0 ? 'no problems' : `${problemCount} with problems`}`,
            ].map(displayText).join('\n'),
          );
          if (problemCount > 0) process.exitCode = ExitCode.LOG_DAMAGED;
        } finally {
          await session.close();
        }
      });
  },
};
