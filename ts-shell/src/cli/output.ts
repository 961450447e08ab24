/**
 * Human renderings of library results for the CLI. Text from the log or the workflow goes through
 * displayText (display.ts, via `shown`): a control character in a name or a fail() message is
 * printed escaped, never raw.
 */

import { shown } from '../display.js';
import { suggestCommand } from '../errors.js';
import { describeStoredHint } from '../remit.js';
import type { RunStatusHint } from '../store/store.js';
import type { RunResult } from '../sequencer/sequencer.js';

export function describeResult(result: RunResult): string {
  const lines = [shown`run ${result.runId} (${result.workflow}): ${result.status}, head seq ${result.headSeq}`];
  if (result.interrupt) {
    lines.push(shown`  parked at ${result.interrupt.node}, interrupt id ${result.interrupt.id}`);
    lines.push(shown`  resume with: ${suggestCommand('resume', result.runId, result.interrupt.id)} '<json value>'`);
  }
  if (result.failure) lines.push(shown`  failed at ${result.failure.node || '-'}: ${result.failure.code}: ${result.failure.message}`);
  lines.push(shown`  state: ${JSON.stringify(result.state)}`);
  return lines.join('\n');
}

/** 0 for parked or completed, 10 for a run that failed terminally (docs/errors.md). */
export function exitCodeForResult(result: RunResult): number {
  return result.status === 'failed' ? 10 : 0;
}

/**
 * What a status hint that disagrees with the log means, and what fixes it: the hint the store
 * keeps, the status the log says, what recoverAll does with that, and the repair command.
 */
export function hintDisagreement(runId: string, hint: { statusHint: RunStatusHint | null; statusHintInvalid?: string }, logStatus: string): string {
  const listed = hint.statusHintInvalid !== undefined || hint.statusHint === null || hint.statusHint === 'running';
  const effect =
    !listed && logStatus === 'running' ? 'recoverAll trusts the hint and never continues the run'
    : !listed ? 'recoverAll leaves the run out, as the log would'
    : logStatus === 'running' ? 'it counts as unknown: recoverAll reads and continues the run'
    : 'recoverAll reads the run and corrects the hint';
  return `the store's status hint is ${describeStoredHint(hint)} but the log says ${logStatus} (${effect}; docs/guide.md, "Recovery at start-up"): ${suggestCommand('repair', runId)} corrects it`;
}
