/**
 * The refund workflow used by the docs, the demo and the tests:
 *
 *   computeRefund (pure) ──► chargeCard (effect) ──► managerApproval (interrupt) ──► notifyCustomer (effect) ──► END
 *         └── nothing to refund ──► END
 *
 * The card is credited at once; a manager then reviews the refund before the customer is told,
 * and the notification says whether the review confirmed it. The outside systems (payments,
 * mail) are passed in, so tests and the demo can count what reached them.
 */

import { z } from 'zod';
import { END, workflow } from 'remit';

export const RefundReason = z.enum(['damaged', 'late', 'changed-mind']);

export const RefundState = z.object({
  orderId: z.string().min(1),
  customerEmail: z.email(),
  amountCents: z.number().int().nonnegative(),
  reason: RefundReason,
  refundCents: z.number().int().nonnegative().optional(),
  chargeId: z.string().optional(),
  approval: z.object({ approved: z.boolean(), approver: z.string().min(1), note: z.string().optional() }).optional(),
  notificationId: z.string().optional(),
});
export type RefundState = z.infer<typeof RefundState>;

export const Approval = z.object({
  approved: z.boolean(),
  approver: z.string().min(1),
  note: z.string().max(500).optional(),
});
export type Approval = z.infer<typeof Approval>;

/** The outside world the workflow touches; both must deduplicate by idempotency key. */
export interface RefundDeps {
  payments: { refund(req: { orderId: string; amountCents: number; idempotencyKey: string }): Promise<{ chargeId: string }> };
  notifier: { send(req: { to: string; template: string; orderId: string; idempotencyKey: string }): Promise<{ messageId: string }> };
}

/** The refund policy: what the model-based tests recompute independently. */
export function refundPolicy(amountCents: number, reason: z.infer<typeof RefundReason>): number {
  if (reason === 'damaged') return amountCents;
  if (reason === 'late') return Math.floor(amountCents / 2);
  return Math.max(0, amountCents - 500); // changed mind: a 5.00 restocking fee
}

export function createRefundWorkflow(deps: RefundDeps) {
  return workflow({ name: 'refund', version: '1.0.0', state: RefundState })
    .pure('computeRefund', {
      run: (s) => ({ refundCents: refundPolicy(s.amountCents, s.reason) }),
      next: (s) => (s.refundCents === 0 ? END : 'chargeCard'),
    })
    .effect('chargeCard', {
      run: (s, { idempotencyKey }) => deps.payments.refund({ orderId: s.orderId, amountCents: s.refundCents!, idempotencyKey }),
      apply: (_s, receipt) => ({ chargeId: receipt.chargeId }),
      next: 'managerApproval',
    })
    .interrupt('managerApproval', {
      resume: Approval,
      apply: (_s, approval) => ({ approval }),
      next: 'notifyCustomer',
    })
    .effect('notifyCustomer', {
      run: (s, { idempotencyKey }) =>
        deps.notifier.send({
          to: s.customerEmail,
          template: s.approval?.approved ? 'refund-confirmed' : 'refund-under-review',
          orderId: s.orderId,
          idempotencyKey,
        }),
      apply: (_s, sent) => ({ notificationId: sent.messageId }),
      next: END,
    })
    .build();
}

export type RefundWorkflow = ReturnType<typeof createRefundWorkflow>;
