/**
 * Consume-once: a parked interrupt accepts exactly one resume value. A second resume is refused
 * with a distinct error before any node runs and is not recorded; of k concurrent resumers exactly
 * one is served and the gated effect fires once.
 */
import type { CellRun } from '../observations.js';
import { GATED_EFFECT_NODE } from '../workflow.js';
import { Findings, describeChanges, linesIn, notApplicable, outcomeText, recordChanges, unchanged, type Checker, type Verdict } from './verdict.js';

const DISTINCT_REFUSALS = ['ALREADY_CONSUMED', 'NOT_PARKED'];

export const consumeOnce: Checker = {
  property: 'consume-once',
  title: 'Consume-once',
  check(run: CellRun): Verdict {
    const dup = run.steps.resumeDuplicate;
    const conc = run.steps.resumeConcurrent;
    if (dup === undefined && conc === undefined) return notApplicable('the schedule resumes the interrupt only once');
    const f = new Findings();
    if (dup !== undefined) {
      const code = dup.outcome?.refusal?.code ?? '';
      f.expect(
        dup.outcome?.outcome === 'refused' && DISTINCT_REFUSALS.includes(code),
        `a second resume of the consumed interrupt was not refused with a distinct error: ${outcomeText(dup.outcome)}`,
      );
      if (dup.before !== null && dup.after !== null) {
        const changes = recordChanges(dup.before, dup.after);
        f.expect(unchanged(changes), `the second resume was recorded: ${describeChanges(changes)}`);
      }
      const lines = linesIn(run, dup.window);
      f.expect(lines.length === 0, `the second resume executed nodes (${lines.length} sink line(s))`);
    }
    if (conc !== undefined) {
      const k = conc.outcomes.length;
      const served = conc.outcomes.filter((o) => o?.outcome === 'completed' || o?.outcome === 'parked').length;
      const refused = conc.outcomes.filter((o) => o?.outcome === 'refused').length;
      const fires = linesIn(run, conc.window).filter((l) => l.t === 'invoke' && l.node === GATED_EFFECT_NODE).length;
      f.expect(served === 1, `${served} of ${k} concurrent resumers were served, expected exactly 1`);
      f.expect(refused === k - 1, `${refused} of ${k} concurrent resumers were refused, expected ${k - 1}`);
      const odd = conc.outcomes.find((o) => o === null || (o.outcome !== 'refused' && o.outcome !== 'completed' && o.outcome !== 'parked'));
      if (odd !== undefined) f.fail(`a concurrent resumer ended neither served nor refused: ${outcomeText(odd ?? null)}`);
      f.expect(fires === 1, `the gated effect ${GATED_EFFECT_NODE} fired ${fires} times for ${k} resumers (saturation ${(fires / k).toFixed(2)})`);
      if (conc.view !== null) f.expect(conc.view.claims <= 1, `${conc.view.claims} resume claims are durable, expected 1`);
      f.note(`saturation ${fires}/${k}`);
    }
    return f.verdict();
  },
};
