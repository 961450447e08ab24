import { createRemit, MemoryStore, renderInspection } from './index.js';
import { MemoryEffectSink } from './effects/sink.js';
import { sinkDeps } from '../../examples/refund/deps.js';
import { createRefundWorkflow, sampleInput, sampleApproval } from '../../examples/refund/index.js';
const sink = new MemoryEffectSink();
const refund = createRefundWorkflow(sinkDeps(sink));
const remit = await createRemit({ store: new MemoryStore(), workflows: [refund], core: 'reference' });
const r = await remit.start(refund, sampleInput, { runId: 'r1' });
console.log(r);
const r2 = await remit.resume('r1', r.interrupt!.id, sampleApproval);
console.log(r2);
try { await remit.resume('r1', r.interrupt!.id, sampleApproval); } catch (e) { console.log(String(e)); }
console.log(renderInspection(await remit.inspect('r1')));
const f = await remit.fork('r1', 1, { intent: 'what if' });
console.log(f, await remit.continueRun(f.runId));
try { await remit.continueRun('r1', { fromSeq: 1 }); } catch (e) { console.log(String(e)); }
console.log(await sink.counts());
console.log(await remit.runs());
const s: number = r.state.amountCents;
