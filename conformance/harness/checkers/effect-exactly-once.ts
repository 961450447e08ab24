/**
 * Effect exactly-once: every effect node on the path is applied exactly once at the deduplicating
 * sink (distinct idempotency keys), and its handler is never invoked again once its completion was
 * durable. Raw invocations and applied effects are counted separately and reported. Each fault
 * may cost one more raw invocation (the intent was durable, the result not), and so may each extra
 * recoverer of a recover race (every recoverer re-invokes a handler whose intent is durable).
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
    const extraRecoverers = Math.max(0, (s.recoverConcurrent?.outcomes.length ?? 1) - 1);
    for (const node of EFFECT_NODES) {
      const forNode = lines.filter(({ line }) => line.node === node);
      const invocations = forNode.filter(({ line }) => line.t === 'invoke');
      const appliedKeys = new Set(forNode.filter(({ line }) => line.t === 'apply').map(({ line }) => line.key));
      f.expect(appliedKeys.size === 1, `${node}: applied under ${appliedKeys.size} distinct key(s), expected exactly 1`);
      f.expect(
        invocations.length <= 1 + faults.length + extraRecoverers,
        `${node}: handler invoked ${invocations.length} times with ${faults.length} fault(s) on the run` +
          (extraRecoverers > 0 ? ` and ${extraRecoverers + 1} concurrent recoverers` : ''),
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
