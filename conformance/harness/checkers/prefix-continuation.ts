/**
 * Prefix continuation: after any fault, resuming yields the durable prefix followed by the
 * continuation from the first node not durably completed. Checked: the final state equals the
 * harness's own model of an uninterrupted run; the completed nodes are the whole path, each once;
 * records durable at a fault are still there, byte for byte; a node durable at a fault never runs
 * its body again. The recover race (k recoverers of one crashed run at once): at least one gets
 * the run's status back, every other is refused with a typed conflict, and no durable record is
 * lost.
 */
import type { CellRun } from '../observations.js';
import { expectedFinalState, initialState, NODE_PATH, type ApprovalValue } from '../workflow.js';
import type { StepObservations } from '../observations.js';
import { Findings, canonical, clip, mainFaults, mainRunLines, notApplicable, outcomeText, recordChanges, sameValue, type Checker, type Verdict } from './verdict.js';

function servedValue(run: CellRun): ApprovalValue | null {
  if (run.steps.resume !== undefined) return run.scenario.resumeValue;
  const decision = (run.mainView?.headState as { decision?: ApprovalValue } | null)?.decision ?? null;
  return decision;
}

export const prefixContinuation: Checker = {
  property: 'prefix-continuation',
  title: 'Prefix continuation',
  check(run: CellRun): Verdict {
    const s = run.steps;
    if (s.start === undefined || (s.resume === undefined && s.resumeConcurrent === undefined)) {
      return notApplicable('the schedule has no start and resume of the main run');
    }
    const f = new Findings();
    const view = run.mainView;
    if (s.baseline !== undefined) {
      const expected = expectedFinalState(run.scenario.input, run.scenario.resumeValue);
      f.expect(
        s.baseline.final?.outcome === 'completed' && sameValue(s.baseline.final.state, expected),
        `the uninterrupted baseline run did not end in the expected state: ${outcomeText(s.baseline.final)}, state ${clip(canonical(s.baseline.final?.state))}`,
      );
    }
    if (view === null) {
      f.fail('the main run could not be read after its steps');
      return f.verdict();
    }
    f.expect(view.status === 'completed', `the main run ended ${view.status}, not completed (next action ${view.nextAction})`);
    const value = servedValue(run);
    if (value === null) {
      f.fail('the main run holds no decision, so no resume value was applied');
    } else {
      const expected = expectedFinalState(run.scenario.input, value);
      f.expect(
        sameValue(view.headState, expected),
        `final state ${clip(canonical(view.headState), 300)} differs from the uninterrupted run's ${clip(canonical(expected), 300)}`,
      );
    }
    f.expect(
      sameValue(view.completedNodes, NODE_PATH),
      `completed nodes ${JSON.stringify(view.completedNodes)}, expected each of ${JSON.stringify(NODE_PATH)} once`,
    );

    const lines = mainRunLines(run);
    const faults = mainFaults(run);
    for (const fault of faults) {
      const at = fault.events[0]?.point ?? fault.ending;
      if (fault.view === null) {
        f.fail(`after the fault at ${at} the run could not be read`);
        continue;
      }
      const durable = fault.view.completedNodes;
      f.expect(
        sameValue(view.completedNodes.slice(0, durable.length), durable),
        `nodes durable at the fault at ${at} (${JSON.stringify(durable)}) are not a prefix of the final ${JSON.stringify(view.completedNodes)}`,
      );
      const changes = recordChanges(fault.view, view);
      f.expect(
        changes.missing.length === 0 && changes.changed.length === 0,
        `records durable at the fault at ${at} were lost or rewritten: ${changes.missing.length} missing, ${changes.changed.length} changed`,
      );
      const rerun = lines.filter(({ line, index }) => index >= fault.sinkOffset && durable.includes(line.node) && line.t !== 'apply');
      for (const { line } of rerun) {
        f.fail(`node ${line.node} ran again (${line.t}) after its completion was durable at the fault at ${at}`);
      }
    }
    const pureRuns = lines.filter(({ line }) => line.t === 'pure' && line.node === 'compute').length;
    f.expect(pureRuns >= 1, 'the pure node compute never ran in the main run');
    f.expect(pureRuns <= 1 + faults.length, `the pure node compute ran ${pureRuns} times with ${faults.length} fault(s)`);
    if (faults.length > 0) f.note(`${faults.length} fault(s) on the main run; continued from the durable prefix`);
    if (s.recoverConcurrent !== undefined) checkRecoverRace(f, s.recoverConcurrent);
    void initialState;
    return f.verdict();
  },
};

/**
 * Of k recoverers continuing one crashed run at once: at least one gets the run's settled status
 * back, every other is refused with a typed conflict (it wrote nothing), and the records durable
 * before are neither lost nor rewritten. Several may get the status back: a recoverer that waited
 * for another's effect attempt and then found the run parked returns it. Whether any step was
 * written twice is judged from the log itself (the path check above: each node completed once).
 */
function checkRecoverRace(f: Findings, race: NonNullable<StepObservations['recoverConcurrent']>): void {
  const k = race.outcomes.length;
  const where = race.hosts.join(', ');
  const progressed = race.outcomes.filter((o) => o?.outcome === 'parked' || o?.outcome === 'completed').length;
  const conflicts = race.outcomes.filter((o) => o?.outcome === 'refused' && o.refusal?.code === 'CONFLICT').length;
  f.expect(progressed >= 1, `${progressed} of ${k} concurrent recoverers (${race.mode}: ${where}) continued the crashed run, expected at least 1`);
  f.expect(
    progressed + conflicts === k,
    `${k - progressed - conflicts} of ${k} concurrent recoverers neither continued the run nor were refused with a typed conflict: ${race.outcomes.map(outcomeText).join('; ')}`,
  );
  if (race.before !== null && race.after !== null) {
    const changes = recordChanges(race.before, race.after);
    f.expect(
      changes.missing.length === 0 && changes.changed.length === 0,
      `records durable before the recoverers ran were lost or rewritten: ${changes.missing.length} missing, ${changes.changed.length} changed`,
    );
  }
  f.note(`recoverers: ${progressed}/${k} got the run's status back, ${conflicts} refused with a conflict (${race.mode}: ${where})`);
}
