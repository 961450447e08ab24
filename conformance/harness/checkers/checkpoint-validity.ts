/**
 * Checkpoint validity: every stored state satisfies the state schema; a node producing an invalid
 * state fails naming the field and persists nothing; an invalid resume value is refused before it
 * is recorded and does not consume the interrupt; a corrupted record is reported with its run and
 * record, never loaded silently.
 */
import type { CellRun } from '../observations.js';
import { RefundStateSchema, initialState, invalidStateInput } from '../workflow.js';
import {
  Findings,
  allViews,
  canonical,
  clip,
  describeChanges,
  notApplicable,
  outcomeText,
  recordChanges,
  sameValue,
  unchanged,
  type Checker,
  type Verdict,
} from './verdict.js';

function rejected(o: { outcome: string; refusal?: { code: string }; error?: { kind: string } } | null): boolean {
  return (o?.outcome === 'refused' && o.refusal?.code === 'INVALID_VALUE') || (o?.outcome === 'error' && o.error?.kind === 'validation');
}

function names(o: { refusal?: { message: string; field?: string }; error?: { message: string; field?: string } } | null, field: string): boolean {
  const detail = o?.refusal ?? o?.error;
  return detail !== undefined && (detail.field === field || detail.message.includes(field));
}

export const checkpointValidity: Checker = {
  property: 'checkpoint-validity',
  title: 'Checkpoint validity',
  check(run: CellRun): Verdict {
    const views = allViews(run);
    const s = run.steps;
    if (views.length === 0 && s.probeCorruption === undefined) return notApplicable('no stored run was read');
    const f = new Findings();
    for (const { label, view } of views) {
      if (!view.integrity.ok) f.fail(`${label}: the store failed its integrity check at ${view.integrity.record}: ${clip(view.integrity.message)}`);
      view.states.forEach((state, i) => {
        const parsed = RefundStateSchema.safeParse(state);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          f.fail(`${label}: stored state #${i} violates the schema at ${issue?.path.join('.')}: ${issue?.message}`);
        }
      });
    }
    const ir = s.probeInvalidResume;
    if (ir !== undefined) {
      f.expect(ir.parked?.outcome === 'parked', `invalid-resume probe: the side run did not park: ${outcomeText(ir.parked)}`);
      f.expect(rejected(ir.invalid), `an invalid resume value was not rejected: ${outcomeText(ir.invalid)}`);
      f.expect(names(ir.invalid, 'approved'), 'the rejection of the invalid resume value does not name the field "approved"');
      if (ir.before !== null && ir.after !== null) {
        const changes = recordChanges(ir.before, ir.after);
        f.expect(unchanged(changes), `the invalid resume value reached the store before validation: ${describeChanges(changes)}`);
      }
      f.expect(
        ir.valid.final?.outcome === 'completed' && sameValue((ir.valid.final.state as { decision?: unknown } | undefined)?.decision, run.scenario.resumeValue),
        `after an invalid resume value, the valid one was not applied (the interrupt was consumed or poisoned): ${outcomeText(ir.valid.final)}`,
      );
    }
    const is = s.probeInvalidState;
    if (is !== undefined) {
      f.expect(rejected(is.outcome), `a node producing an invalid state did not fail with a validation error: ${outcomeText(is.outcome)}`);
      f.expect(names(is.outcome, 'refundCents'), 'the validation error for the invalid state does not name the field "refundCents"');
      if (is.view !== null) {
        const expectedHead = initialState(invalidStateInput(run.scenario.runIds.sideInvalidState));
        f.expect(
          sameValue(is.view.headState, expectedHead),
          `after the invalid state, the head is ${clip(canonical(is.view.headState))}, not the last valid state`,
        );
        f.expect(is.view.completedNodes.length === 0, `the failed node was recorded as completed: ${JSON.stringify(is.view.completedNodes)}`);
      }
    }
    const c = s.probeCorruption;
    if (c !== undefined) {
      if (c === null) f.fail('the corruption probe gave no answer');
      else {
        f.expect(c.detected, `a corrupted record (${c.corruptedRecord}) was loaded silently: ${clip(c.message)}`);
        const namesRun = c.reportedRunId === c.corruptedRunId || c.message.includes(c.corruptedRunId);
        const namesRecord = c.reportedRecord === c.corruptedRecord || c.message.includes(c.corruptedRecord);
        if (c.detected) {
          f.expect(namesRun && namesRecord, `the corruption error does not name ${[namesRun ? null : 'the run', namesRecord ? null : 'the record'].filter((w) => w !== null).join(' and ')}: ${clip(c.message)}`);
        }
      }
    }
    return f.verdict();
  },
};
