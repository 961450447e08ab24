/**
 * Fork-intent obligation: continuing a run from a checkpoint other than its head without an
 * explicit fork is refused with a clear error, and changes nothing (no record, no effect).
 */
import type { CellRun } from '../observations.js';
import { Findings, describeChanges, linesIn, notApplicable, outcomeText, recordChanges, unchanged, type Checker, type Verdict } from './verdict.js';

export const forkIntent: Checker = {
  property: 'fork-intent',
  title: 'Fork-intent obligation',
  check(run: CellRun): Verdict {
    const expressible = run.hello.continueFrom;
    if (expressible?.supported === false) return notApplicable(`the system cannot continue a run from an older checkpoint: ${expressible.reason}`);
    const step = run.steps.continueFromOlder;
    if (step === undefined) return notApplicable('the schedule has no continue-from-older step');
    const f = new Findings();
    f.expect(
      step.outcome?.outcome === 'refused',
      `continuing the completed run from the checkpoint after compute, without a fork, was not refused: ${outcomeText(step.outcome)}`,
    );
    if (step.before !== null && step.after !== null) {
      const changes = recordChanges(step.before, step.after);
      f.expect(unchanged(changes), `the implicit time travel changed the store: ${describeChanges(changes)}`);
    }
    const lines = linesIn(run, step.window);
    const invocations = lines.filter((l) => l.t === 'invoke');
    f.expect(
      lines.length === 0,
      `the implicit time travel executed nodes: ${lines.length} sink line(s), effect handlers invoked: ${invocations.map((l) => l.node).join(', ') || 'none'}`,
    );
    if (step.outcome?.refusal !== undefined) f.note(`refused with ${step.outcome.refusal.code}`);
    return f.verdict();
  },
};
