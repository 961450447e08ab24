/** Human renderings of library results for the CLI. */

import { suggestCommand } from '../errors.js';
import type { RunResult } from '../sequencer/sequencer.js';

export function describeResult(result: RunResult): string {
  const lines = [`run ${result.runId} (${result.workflow}): ${result.status}, head seq ${result.headSeq}`];
  if (result.interrupt) {
    lines.push(`  parked at ${result.interrupt.node}, interrupt id ${result.interrupt.id}`);
    lines.push(`  resume with: ${suggestCommand('resume', result.runId, result.interrupt.id)} '<json value>'`);
  }
  if (result.failure) lines.push(`  failed at ${result.failure.node || '-'}: ${result.failure.code}: ${result.failure.message}`);
  lines.push(`  state: ${JSON.stringify(result.state)}`);
  return lines.join('\n');
}

/** 0 for parked or completed, 10 for a run that failed terminally (docs/errors.md). */
export function exitCodeForResult(result: RunResult): number {
  return result.status === 'failed' ? 10 : 0;
}
