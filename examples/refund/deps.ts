/**
 * Refund dependencies backed by an effect sink (ts-shell/src/effects/sink.ts): the sink plays the
 * payment provider and the mail service, deduplicating by idempotency key and counting raw
 * invocations and applied effects.
 */

import type { EffectSink } from 'remit/testing';
import type { RefundDeps } from './workflow.js';

export function sinkDeps(sink: EffectSink): RefundDeps {
  return {
    payments: {
      async refund(req) {
        const receipt = await sink.apply('chargeCard', req.idempotencyKey, { orderId: req.orderId, amountCents: req.amountCents });
        return { chargeId: `ch_${receipt.receiptId}` };
      },
    },
    notifier: {
      async send(req) {
        const receipt = await sink.apply('notifyCustomer', req.idempotencyKey, { to: req.to, template: req.template, orderId: req.orderId });
        return { messageId: `msg_${receipt.receiptId}` };
      },
    },
  };
}
