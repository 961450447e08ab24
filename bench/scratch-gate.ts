import { rmSync, mkdirSync } from 'node:fs';
import { openSqliteStore, type Store } from 'remit';
import type { RecoveryCore } from 'remit/core';
import { claimFromHeld, readEveryRacer } from './workloads/claim.js';
import { openRawDb, rawClaimGate } from './workloads/raw-sqlite.js';
import { parkedInterruptId, parkedWorkflow, remitCore, remitOpen, remitPrepareParked } from './workloads/remit.js';
import { RESUME_VALUE } from './workloads/shapes.js';
const dir = '/work/main/bench/results/tmp/gate'; rmSync(dir, { recursive: true, force: true }); mkdirSync(dir, { recursive: true });
const file = `${dir}/g.db`;
const { core: realCore } = await remitCore();
const coreT = { t: 0 }; const storeT = { t: 0 };
const core = new Proxy(realCore, { get(t, p, r) { const v = Reflect.get(t, p, r); return typeof v === 'function' ? (...a: unknown[]) => { const t0 = performance.now(); try { return (v as Function).apply(t, a); } finally { coreT.t += performance.now() - t0; } } : v; } }) as RecoveryCore;
const k = 8;
const preparer = await remitOpen(file, parkedWorkflow(1), 'NORMAL');
const stores: Store[] = Array.from({ length: k }, () => { const s = openSqliteStore(file, { synchronous: 'FULL' }); return new Proxy(s, { get(t, p, r) { const v = Reflect.get(t, p, r); if (p !== 'append') return typeof v === 'function' ? v.bind(t) : v; return async (...a: unknown[]) => { const t0 = performance.now(); try { return await (v as Function).apply(t, a); } finally { storeT.t += performance.now() - t0; } }; } }); });
const raws = Array.from({ length: k }, () => openRawDb(`${dir}/raw.db`, 'FULL'));
const iid = new TextEncoder().encode(parkedInterruptId(1));
const vb = new TextEncoder().encode(JSON.stringify(RESUME_VALUE));
let b = 0;
for (let round = 0; round < 6; round++) {
  const ids: string[] = [];
  for (let c = 0; c < 100; c++) { const id = `r${b}-${c}`; await remitPrepareParked(file, 1, id, preparer); ids.push(id); }
  const held = await readEveryRacer(stores, realCore, ids);
  coreT.t = 0; storeT.t = 0;
  let t0 = performance.now();
  for (let i = 0; i < ids.length; i++) await Promise.all(stores.map((s, r) => claimFromHeld(s, core, ids[i]!, held[i]![r]!, iid, vb)));
  const remit = (performance.now() - t0) / 100;
  t0 = performance.now();
  rawClaimGate(raws, `raw${b++}`, 100, vb);
  const raw = (performance.now() - t0) / 100;
  console.log(`k=8 held ${remit.toFixed(3)} ms/claim (core ${(coreT.t / 100).toFixed(3)}, store.append ${(storeT.t / 100).toFixed(3)}), raw ${raw.toFixed(3)} -> ${(raw / remit).toFixed(2)}x`);
}
await preparer.close();
