/**
 * Liveness: from every log reachable under the fault model, recovery names a next action and the
 * run goes on to completion; an interrupt claimed by a process that then crashed continues with
 * the claimed value; a run whose definition changed incompatibly is refused, naming the mismatch.
 * Timeouts, lost processes and give-ups of the runner count against it.
 */
import type { CellRun } from '../observations.js';
import { Findings, clip, mainFaults, notApplicable, outcomeText, sameValue, type Checker, type Verdict } from './verdict.js';

export const liveness: Checker = {
  property: 'liveness',
  title: 'Liveness',
  check(run: CellRun): Verdict {
    const s = run.steps;
    if (s.start === undefined && s.probeDefinitionChange === undefined) return notApplicable('nothing in the schedule can get stuck');
    const f = new Findings();
    for (const incident of run.incidents) f.fail(`${incident.what} in step ${incident.step}: ${clip(incident.detail)}`);
    for (const fault of run.faults) {
      const at = fault.events[0]?.point ?? fault.ending;
      if (fault.view === null) f.fail(`after the fault at ${at}, recovery gave no answer`);
      else f.expect(fault.view.nextAction !== 'STUCK' && fault.view.status !== 'invalid', `after the fault at ${at}, recovery named no next action (${fault.view.status})`);
    }
    if (s.start !== undefined && (s.resume !== undefined || s.resumeConcurrent !== undefined)) {
      f.expect(run.mainView?.status === 'completed', `the main run did not reach completion: ${run.mainView?.status ?? 'unreadable'} (${run.mainView?.nextAction ?? ''})`);
      const claimedThenStopped = mainFaults(run).some((x) => x.view !== null && x.view.claims > 0 && x.view.status !== 'completed');
      if (claimedThenStopped && s.resume !== undefined) {
        const decision = (run.mainView?.headState as { decision?: unknown } | null)?.decision;
        f.expect(sameValue(decision, run.scenario.resumeValue), 'a claimed resume value was not the one the run continued with after the fault');
      }
    }
    const dc = s.probeDefinitionChange;
    if (dc !== undefined) {
      if (dc === null) f.fail('the definition-change probe gave no answer');
      else {
        f.expect(
          dc.outcome.outcome === 'refused' && dc.outcome.refusal?.code === 'DEFINITION_MISMATCH',
          `a run parked under one definition was continued under a changed one (${dc.change}) instead of being refused: ${outcomeText(dc.outcome)}`,
        );
        if (dc.outcome.outcome === 'refused') {
          f.expect((dc.outcome.refusal?.message ?? '').includes(dc.changedNode), `the refusal does not name the mismatch (node ${dc.changedNode})`);
        }
      }
    }
    return f.verdict();
  },
};
