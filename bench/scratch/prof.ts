import { z } from 'zod';
import { createRemit, END, openMemoryStore, openSqliteStore, workflow } from 'remit';
import { createCore } from 'remit/core';
const State = z.object({ n: z.number().int(), ok: z.boolean().optional() });
const approvals = workflow({ name: 'approvals', version: '1', state: State })
  .pure('prepare', { run: (s) => ({ n: s.n + 1 }), next: 'approve' })
  .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: 'settle' })
  .effect('settle', { run: async () => ({ add: 10 }), apply: (s, r) => ({ n: s.n + r.add }), next: 'finish' })
  .pure('finish', { run: (s) => ({ n: s.n * 2 }), next: END })
  .build();
const core = await createCore('wasm');
const path = `/tmp/prof-${process.pid}.db`;
const store = openSqliteStore(path, { synchronous: 'NORMAL' });
const remit = await createRemit({ store, core, workflows: [approvals] });
let t = performance.now();
for (let i = 0; i < 1000; i++) {
  const p = await remit.start(approvals, { n: i }, { runId: `done-${i}` });
  await remit.resume(p.runId, p.interrupt!.id, { ok: true });
}
console.log('build ms', Math.round(performance.now() - t));
for (let k = 0; k < 3; k++) {
  t = performance.now();
  const runs = await remit.runs();
  console.log('runs() ms', Math.round(performance.now() - t), runs.length);
}
t = performance.now();
for (let i = 0; i < 1000; i++) await store.readRecords(`done-${i}`);
console.log('readRecords x1000 ms', Math.round(performance.now() - t));
// The bench's way: a fresh copy, FULL, a store view without the index, a fresh Remit.
import Database from 'better-sqlite3';
import type { Store } from 'remit';
for (let k = 0; k < 3; k++) {
  const copyPath = `/tmp/prof-${process.pid}-copy${k}.db`;
  const db = new Database(path);
  db.prepare('VACUUM INTO ?').run(copyPath);
  db.close();
  const copy = openSqliteStore(copyPath);
  const view = Object.assign(Object.create(copy) as Store, { listRunsToRecover: undefined, correctRunStatuses: undefined });
  const r2 = await createRemit({ store: view, core, workflows: [approvals] });
  t = performance.now();
  await r2.runs();
  console.log('copy runs() ms', Math.round(performance.now() - t));
  t = performance.now();
  const out = await r2.recoverAll();
  console.log('copy recoverAll ms', Math.round(performance.now() - t), out.length);
  await copy.close();
}
