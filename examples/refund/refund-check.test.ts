/**
 * The refund workflow under checkWorkflow, as a service would check its own workflow
 * (docs/guide.md, "Checking your own workflow"): imported by package name, the outside systems
 * replaced by a deduplicating memory sink, approved and rejected reviews and a refund of nothing.
 */

import { describe, expect, it } from 'vitest';
import { checkWorkflow, MemoryEffectSink } from 'remit/testing';
import { sinkDeps } from './deps.js';
import { sampleApproval, sampleInput } from './index.js';
import { createRefundWorkflow } from './workflow.js';

describe('the refund workflow keeps the resume contract under a crash at every fault point', () => {
  it.each([
    ['approved', sampleInput, { ...sampleApproval }, ['computeRefund', 'chargeCard', 'managerApproval', 'notifyCustomer']],
    ['rejected', sampleInput, { approved: false, approver: 'kim@example.com' }, ['computeRefund', 'chargeCard', 'managerApproval', 'notifyCustomer']],
    ['nothing to refund', { ...sampleInput, reason: 'changed-mind' as const, amountCents: 0 }, { ...sampleApproval }, ['computeRefund']],
  ])('%s', async (_label, input, approval, path) => {
    const sink = new MemoryEffectSink();
    const report = await checkWorkflow(createRefundWorkflow(sinkDeps(sink)), { input, resume: { managerApproval: approval } });
    expect(report.problems).toEqual([]);
    expect(report.reference.path).toEqual(path);
    expect(report.faults.length).toBeGreaterThan(path.length);
    // The sink applied each key once, however often the scenarios called it (a crash that added an
    // attempt record gives notifyCustomer's intent a later seq, so its key is another one then).
    const { byKey } = await sink.counts();
    expect(Object.keys(byKey).length).toBe(path.length === 1 ? 0 : 3);
    for (const key of Object.values(byKey)) expect(key.applied).toBe(1);
    expect(Object.values(byKey).some((key) => key.invocations > 1)).toBe(path.length > 1);
  });
});
