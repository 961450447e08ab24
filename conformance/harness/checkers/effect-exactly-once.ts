/**
 * Effect exactly-once: every effect node on the path is applied exactly once at the deduplicating
 * sink (distinct idempotency keys), and its handler is never invoked again once its completion was
 * durable. Raw invocations and applied effects are counted separately and reported. Raw
 * invocations may exceed 1 only by the faults that struck inside the node's window: after its
 * handler had been invoked and before its completion was durable (that call's outcome was lost, so
 * the handler runs again with the same key). A fault before the handler ran costs nothing, and
 * neither does any number of concurrent recoverers or resumers: each invocation needs its own
 * claim, so k recoverers of a run crashed right after its intent invoke the handler once.
 */
import type { CellRun } from '../observations.js';
import { EFFECT_NODES } from '../workflow.js';
import { Findings, mainFaults, mainRunLines, notApplicable, type Checker, type Verdict } from './verdict.js';

export const effectExactlyOnce: Checker = {
  property: 'effect-exactly-once',
  title: 'Effect exactly-once',
  check(run: CellRun): Verdict {
    const s = run.steps;
    if (s.start === undefined || (s.resume === undefined && s.resumeConcurrent === undefined)) {
      return notApplicable('the schedule has no start and resume of the main run');
    }
    const f = new Findings();
    const lines = mainRunLines(run);
    const faults = mainFaults(run);
    const recoverers = s.recoverConcurrent?.outcomes.length ?? 0;
    for (const node of EFFECT_NODES) {
      const forNode = lines.filter(({ line }) => line.node === node);
      const invocations = forNode.filter(({ line }) => line.t === 'invoke');
      const appliedKeys = new Set(forNode.filter(({ line }) => line.t === 'apply').map(({ line }) => line.key));
      f.expect(appliedKeys.size === 1, `${node}: applied under ${appliedKeys.size} distinct key(s), expected exactly 1`);
      // A fault inside the window: the handler had been invoked and its completion was not durable.
      const inWindow = faults.filter(
        (fault) => invocations.some(({ index }) => index < fault.sinkOffset) && !(fault.view?.effectsDone.includes(node) ?? false),
      ).length;
      f.expect(
        invocations.length <= 1 + inWindow,
        `${node}: handler invoked ${invocations.length} times with ${inWindow} of ${faults.length} fault(s) inside its window (invoked, completion not durable)` +
          (recoverers > 0 ? ` and ${recoverers} concurrent recoverers` : ''),
      );
      for (const fault of faults) {
        if (fault.view === null || !fault.view.effectsDone.includes(node)) continue;
        const again = invocations.filter(({ index }) => index >= fault.sinkOffset).length;
        const at = fault.events[0]?.point ?? fault.ending;
        f.expect(again === 0, `${node}: handler invoked ${again} more time(s) after its completion was durable (fault at ${at})`);
      }
      f.note(`${node}: ${invocations.length} raw invocation(s), ${appliedKeys.size} applied`);
    }
    return f.verdict();
  },
};
