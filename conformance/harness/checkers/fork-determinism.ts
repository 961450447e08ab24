/**
 * Fork determinism: forking at the checkpoint after charge leaves the source byte-identical; two
 * forks of that checkpoint driven with the same value have equal logs apart from ids; effects
 * before the fork point are inherited (charge never runs again), effects after it are new
 * (notify applied once per fork, under a key the source and the other fork do not use).
 */
import type { CellRun } from '../observations.js';
import { expectedFinalState } from '../workflow.js';
import {
  Findings,
  canonical,
  clip,
  describeChanges,
  linesIn,
  mainRunLines,
  notApplicable,
  outcomeText,
  recordChanges,
  sameValue,
  unchanged,
  type Checker,
  type Verdict,
} from './verdict.js';

export const forkDeterminism: Checker = {
  property: 'fork-determinism',
  title: 'Fork determinism',
  check(run: CellRun): Verdict {
    if (!run.hello.fork.supported) return notApplicable(`the system has no fork: ${run.hello.fork.reason}`);
    const step = run.steps.forkTwice;
    if (step === undefined) return notApplicable('the schedule has no fork step');
    const f = new Findings();
    if (step.sourceBefore === null || step.sourceAfter === null) {
      f.fail('the source run could not be read around the forks');
    } else {
      const changes = recordChanges(step.sourceBefore, step.sourceAfter);
      f.expect(unchanged(changes), `the source run is not byte-identical after two forks: ${describeChanges(changes)}`);
    }
    const expected = expectedFinalState(run.scenario.input, run.scenario.resumeValue);
    const mainNotifyKeys = new Set(
      mainRunLines(run)
        .filter(({ line }) => line.t === 'apply' && line.node === 'notify')
        .map(({ line }) => line.key),
    );
    const forkKeys: string[] = [];
    step.forks.forEach((fork, i) => {
      const label = `fork ${i + 1}`;
      if (fork.runId === null) {
        f.fail(`${label} was not created`);
        return;
      }
      f.expect(fork.final?.outcome === 'completed', `${label} did not complete: ${outcomeText(fork.final)}`);
      f.expect(
        fork.view !== null && sameValue(fork.view.headState, expected),
        `${label} ended in ${clip(canonical(fork.view?.headState), 300)}, expected ${clip(canonical(expected), 300)}`,
      );
      const lines = linesIn(run, fork.window);
      const charges = lines.filter((l) => l.t === 'invoke' && l.node === 'charge').length;
      f.expect(charges === 0, `${label}: charge (before the fork point) ran again ${charges} time(s) instead of being inherited`);
      const keys = [...new Set(lines.filter((l) => l.t === 'apply' && l.node === 'notify').map((l) => l.key ?? ''))];
      f.expect(keys.length === 1, `${label}: notify applied under ${keys.length} key(s), expected 1 new effect`);
      for (const key of keys) {
        f.expect(!mainNotifyKeys.has(key), `${label}: notify reused the source run's idempotency key, so the sink drops the fork's effect`);
        forkKeys.push(key);
      }
    });
    f.expect(new Set(forkKeys).size === forkKeys.length, 'the two forks share a notify idempotency key');
    const [a, b] = step.forks;
    if (a?.view != null && b?.view != null) {
      const na = a.view.normalized;
      const nb = b.view.normalized;
      const firstDiff = na.findIndex((r, i) => !sameValue(r, nb[i]));
      f.expect(
        na.length === nb.length && firstDiff < 0,
        `the two forks' logs differ apart from ids: ${na.length} vs ${nb.length} records, first difference at record ${firstDiff < 0 ? Math.min(na.length, nb.length) : firstDiff}`,
      );
    }
    return f.verdict();
  },
};
