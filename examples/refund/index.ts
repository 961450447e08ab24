/**
 * The refund example as a workflow module for the CLI (`remit --workflow examples/refund/index.ts`,
 * the default). A workflow module exports `createWorkflows(context)` (or `workflows`, or a default
 * export) returning the workflows the CLI may run. Effects go to a file sink next to the database.
 */

import { join } from 'node:path';
import { FileEffectSink } from 'remit/testing';
import { sinkDeps } from './deps.js';
import { createRefundWorkflow } from './workflow.js';

export interface WorkflowModuleContext {
  /** The folder of the database (`--db`); modules keep their side files there. */
  dataDir: string;
}

export function createWorkflows(context: WorkflowModuleContext) {
  const sinkDir = process.env['REMIT_EFFECT_SINK'] ?? join(context.dataDir, 'refund-effects');
  return [createRefundWorkflow(sinkDeps(new FileEffectSink(sinkDir)))];
}

/** A sample input for `remit run` and the demo. */
export const sampleInput = {
  orderId: 'order-1042',
  customerEmail: 'ada@example.com',
  amountCents: 12_500,
  reason: 'damaged',
} as const;

export const sampleApproval = { approved: true, approver: 'kim@example.com', note: 'photos confirm the damage' } as const;

export * from './workflow.js';
