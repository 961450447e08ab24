import { spawnChild } from './testing/spawn-child.js';
const t0 = Date.now();
const c = spawnChild({ db: '/tmp/remit-smoke/a.db', sinkDir: '/tmp/remit-smoke/sink', core: 'reference', action: 'start', runId: 'k1',
  input: { orderId: 'o', customerEmail: 'a@b.co', amountCents: 1000, reason: 'late' }, fault: { at: 'effect.after-handler@chargeCard', mode: 'kill' } });
const exit = await c.exited;
console.log(Date.now() - t0, 'ms', exit.code, exit.signal, exit.events, exit.stderr.slice(0, 500));
const c2 = spawnChild({ db: '/tmp/remit-smoke/a.db', sinkDir: '/tmp/remit-smoke/sink', core: 'reference', action: 'continue', runId: 'k1' });
const e2 = await c2.exited; console.log(e2.code, JSON.stringify(e2.events), e2.stderr.slice(0,300));
