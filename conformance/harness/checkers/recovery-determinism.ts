/**
 * Recovery determinism: recovery is a pure function of the durable log. Reading the same log twice
 * in one process, in a second process, and with every recovery implementation the adapter has
 * (REMIT: the Wasm and the reference core) gives the same recovered run, and writes nothing.
 */
import type { CellRun } from '../observations.js';
import type { RunView } from '../protocol.js';
import { Findings, canonical, notApplicable, type Checker, type Verdict } from './verdict.js';

function recovered(view: RunView): string {
  const { status, nextAction, completedNodes, effectsDone, headState, recoveries, records, claims } = view;
  return canonical({ status, nextAction, completedNodes, effectsDone, headState, recoveries, records, claims });
}

function differingFields(a: RunView, b: RunView): string[] {
  const keys = ['status', 'nextAction', 'completedNodes', 'effectsDone', 'headState', 'recoveries', 'records', 'claims'] as const;
  return keys.filter((k) => canonical(a[k]) !== canonical(b[k]));
}

export const recoveryDeterminism: Checker = {
  property: 'recovery-determinism',
  title: 'Recovery determinism',
  check(run: CellRun): Verdict {
    const step = run.steps.recoverTwice;
    if (step === undefined) return notApplicable('the schedule has no recover-twice step');
    const f = new Findings();
    if (step.first === null || step.second === null) {
      f.fail('the run could not be recovered twice');
      return f.verdict();
    }
    f.expect(recovered(step.first) === recovered(step.second), `recovering twice in one process differs in ${differingFields(step.first, step.second).join(', ')}`);
    if (step.otherProcess !== null) {
      f.expect(
        recovered(step.first) === recovered(step.otherProcess),
        `a second process recovers differently, in ${differingFields(step.first, step.otherProcess).join(', ')}`,
      );
    } else {
      f.note(`no second process: ${step.otherProcessReason ?? 'unknown'}`);
    }
    for (const view of [step.first, step.otherProcess]) {
      if (view === null) continue;
      const digests = Object.entries(view.recoveries);
      const distinct = new Set(digests.map(([, d]) => d));
      f.expect(distinct.size <= 1, `recovery implementations disagree: ${digests.map(([name, d]) => `${name}=${d.slice(0, 16)}`).join(', ')}`);
      if (digests.length > 1) f.note(`${digests.map(([n]) => n).join(' and ')} recoveries identical`);
    }
    for (const fault of run.faults) {
      if (fault.view?.status === 'invalid') f.fail(`recovery failed after the fault in step ${fault.step}: ${fault.view.integrity.ok ? '' : fault.view.integrity.message}`);
    }
    return f.verdict();
  },
};
