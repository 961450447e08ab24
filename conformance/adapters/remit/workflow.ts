/**
 * The reference workflow in REMIT's workflow API. Node bodies and effect handlers carry the fault
 * hooks the shell cannot place itself (inside a pure node, inside a handler around the outside
 * effect); commit points come from the sequencer's own hooks and the store wrapper.
 */
import { END, workflow } from 'remit';
import type { EffectSinkWriter } from '../../harness/sink.js';
import { ApprovalValueSchema, RefundStateSchema, chargeResult, notifyResult, refundFor } from '../../harness/workflow.js';
import type { FaultSwitch } from '../common/serve.js';

export interface WorkflowDeps {
  sink: () => EffectSinkWriter;
  faults: FaultSwitch;
  /** Canary only: ignore the idempotency key REMIT passes and invent a new one per invocation. */
  unstableKeys: boolean;
}

let unstableCounter = 0;

function outsideEffect(deps: WorkflowDeps, node: string, runId: string, idempotencyKey: string): void {
  const key = deps.unstableKeys ? `${idempotencyKey}#${process.pid}-${++unstableCounter}` : idempotencyKey;
  deps.sink().invoke(node, key, runId);
  deps.faults.hit(`in-handler-before-effect:${node}`);
  deps.sink().apply(node, key, runId);
  deps.faults.hit(`in-handler-after-effect:${node}`);
}

/** `notifyNode` names the last node; the definition-change probe builds version 2 with another name. */
export function buildRefundWorkflow(deps: WorkflowDeps, notifyNode = 'notify') {
  return workflow({ name: 'refund', version: '1', state: RefundStateSchema })
    .pure('compute', {
      run: (s, ctx) => {
        deps.sink().pure('compute', ctx.runId);
        deps.faults.hit('inside-pure:compute');
        return { refundCents: refundFor(s.amountCents), visited: [...s.visited, 'compute'] };
      },
      next: 'charge',
    })
    .effect('charge', {
      run: (s, ctx) => {
        outsideEffect(deps, 'charge', ctx.runId, ctx.idempotencyKey);
        return chargeResult(s.orderId, s.refundCents ?? -1);
      },
      apply: (s, chargeId: string) => ({ chargeId, visited: [...s.visited, 'charge'] }),
      next: 'approval',
    })
    .interrupt('approval', {
      resume: ApprovalValueSchema,
      apply: (s, decision) => ({ decision, visited: [...s.visited, 'approval'] }),
      next: notifyNode,
    })
    .effect(notifyNode, {
      run: (s, ctx) => {
        outsideEffect(deps, 'notify', ctx.runId, ctx.idempotencyKey);
        return notifyResult(s.orderId, s.decision?.approved ?? false);
      },
      apply: (s, notificationId: string) => ({ notificationId, visited: [...s.visited, 'notify'] }),
      next: END,
    })
    .build();
}
