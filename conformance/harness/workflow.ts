/**
 * The reference workflow, as data and as an executable model. Every adapter defines this same
 * workflow in its own system: compute (pure) -> charge (effect) -> approval (interrupt) -> notify
 * (effect) -> end, the shape of examples/refund. The harness keeps its own model of the result
 * (`expectedFinalState`) so that checkers do not trust any system under test for the oracle.
 */
import { z } from 'zod';
import { CATALOGUE, assertSameList, fillFormat } from './catalogue.js';

export const REFERENCE_WORKFLOW = {
  name: 'refund',
  nodes: [
    { name: 'compute', kind: 'pure' },
    { name: 'charge', kind: 'effect' },
    { name: 'approval', kind: 'interrupt' },
    { name: 'notify', kind: 'effect' },
  ],
} as const;

export type NodeName = (typeof REFERENCE_WORKFLOW.nodes)[number]['name'];
export const NODE_PATH: readonly NodeName[] = REFERENCE_WORKFLOW.nodes.map((n) => n.name);
export const EFFECT_NODES: readonly NodeName[] = ['charge', 'notify'];
/** The effect that only runs after the interrupt is resumed: what concurrent resumers race for. */
export const GATED_EFFECT_NODE: NodeName = 'notify';
export const PURE_NODES: readonly NodeName[] = ['compute'];
export const INTERRUPT_NODE: NodeName = 'approval';
const RULES = CATALOGUE.workflow;
assertSameList('the reference workflow', [REFERENCE_WORKFLOW.name, ...REFERENCE_WORKFLOW.nodes.map((n) => `${n.name}:${n.kind}`)], [RULES.name, ...RULES.nodes.map((n) => `${n.name}:${n.kind}`)]);
assertSameList('EFFECT_NODES', EFFECT_NODES, RULES.effectNodes);
assertSameList('PURE_NODES', PURE_NODES, RULES.pureNodes);
assertSameList('INTERRUPT_NODE and GATED_EFFECT_NODE', [INTERRUPT_NODE, GATED_EFFECT_NODE], [RULES.interruptNode, RULES.gatedEffectNode]);

export const ApprovalValueSchema = z.object({
  approved: z.boolean(),
  note: z.string().max(200),
});
export type ApprovalValue = z.infer<typeof ApprovalValueSchema>;

export const RefundInputSchema = z.object({
  orderId: z.string().min(1).max(64),
  amountCents: z.number().int().min(0),
});
export type RefundInput = z.infer<typeof RefundInputSchema>;

/** Every state that reaches a store must satisfy this (the checkpoint-validity property). */
export const RefundStateSchema = z.object({
  orderId: z.string().min(1).max(64),
  amountCents: z.number().int().min(0),
  refundCents: z.number().int().min(0).nullable(),
  chargeId: z.string().nullable(),
  decision: ApprovalValueSchema.nullable(),
  notificationId: z.string().nullable(),
  visited: z.array(z.string()),
});
export type RefundState = z.infer<typeof RefundStateSchema>;

export function initialState(input: RefundInput): RefundState {
  return {
    orderId: input.orderId,
    amountCents: input.amountCents,
    refundCents: null,
    chargeId: null,
    decision: null,
    notificationId: null,
    visited: [],
  };
}

/**
 * The fee rule keeps a deliberate edge: an order of 0 cents gets a refund of -1, which the state
 * schema rejects. The invalid-state probe uses exactly that input, so the invalid state comes from
 * a node, not from the input.
 */
export function refundFor(amountCents: number): number {
  const feeCents = Math.max(RULES.feeRule.minimumFeeCents, Math.floor(amountCents / RULES.feeRule.divisor));
  return amountCents - feeCents;
}

export function chargeResult(orderId: string, refundCents: number): string {
  return fillFormat(RULES.chargeIdFormat, { orderId, refundCents });
}

export function notifyResult(orderId: string, approved: boolean): string {
  const words = RULES.notificationDecisionWords;
  return fillFormat(RULES.notificationIdFormat, { orderId, decision: approved ? words.approved : words.rejected });
}

/** What an uninterrupted run with this input and this resume value must end with. */
export function expectedFinalState(input: RefundInput, value: ApprovalValue): RefundState {
  const refundCents = refundFor(input.amountCents);
  return {
    ...initialState(input),
    refundCents,
    chargeId: chargeResult(input.orderId, refundCents),
    decision: value,
    notificationId: notifyResult(input.orderId, value.approved),
    visited: [...NODE_PATH],
  };
}

/** Input of the invalid-state probe: compute produces refundCents = -1 from it. */
export function invalidStateInput(orderId: string): RefundInput {
  return { orderId, amountCents: RULES.invalidStateAmountCents };
}

/** A resume value that violates ApprovalValueSchema in field `approved`. */
export const INVALID_RESUME_VALUE = { approved: 'yes', note: 'not a boolean' } as const;
assertSameList('INVALID_RESUME_VALUE', [INVALID_RESUME_VALUE], [RULES.invalidResumeValue]);
