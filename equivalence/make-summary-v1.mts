/**
 * Writes equivalence/summary-v1.json: the summaries the reference core of commit 5361384 (the last
 * to write version 1 of the summary encoding) gives after each record of three logs whose
 * interrupts are named as the shell names them, one id of the older kind among them (every state a
 * snapshot, which the shell reads as it reads its own). Run against a
 * checkout of that commit (it needs its dependencies, e.g. a node_modules link):
 *
 *   git worktree add <dir> 5361384 && ln -s "$PWD/node_modules" <dir>/
 *   node --import tsx equivalence/make-summary-v1.mts <dir> equivalence/summary-v1.json
 */
import { writeFileSync } from 'node:fs';
// The sources of the release to take summaries from: a checkout of commit 5361384.
const OLD_TREE = process.argv[2];
const OUT = process.argv[3];
if (OLD_TREE === undefined || OUT === undefined) throw new Error('usage: node --import tsx equivalence/make-summary-v1.mts <checkout of 5361384> <out.json>');
const { encodeLogV2, RecordKind, reference, EMPTY_SUMMARY } = await import(`${OLD_TREE}/ts-shell/src/core/index.ts`);
const t = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
type R = Record<string, unknown>;
function build(kind: 'completed' | 'parked' | 'failed'): R[] {
  const recs: R[] = [];
  const push = (r: R) => recs.push({ ...r, seq: recs.length });
  push({ kind: RecordKind.RUN_STARTED, runId: t('run-1'), workflow: t('approvals'), version: t('1'), fingerprint: new Uint8Array(32).fill(7),
    definition: t('{}'), nodes: [{ name: t('ask'), kind: 1 }, { name: t('approve'), kind: 3 }, { name: t('send'), kind: 2 }], startNode: t('ask'), state: t('{"n":0}') });
  for (let cycle = 0; cycle < 6; cycle++) {
    push({ kind: RecordKind.NODE_COMPLETED, node: t('ask'), next: t('approve'), stateForm: 0, state: t(`{"n":${cycle}}`) });
    const id = cycle === 2 ? 'legacy-approval' : `approve@${recs.length}`;
    push({ kind: RecordKind.INTERRUPT_PARKED, node: t('approve'), interruptId: t(id) });
    push({ kind: RecordKind.RESUME_CLAIMED, interruptId: t(id), value: t(`{"by":"u${cycle}"}`) });
    push({ kind: RecordKind.NODE_COMPLETED, node: t('approve'), next: t(cycle === 5 ? 'send' : 'ask'), stateForm: 0, state: t(`{"n":${cycle},"by":"u${cycle}"}`) });
  }
  const key = t('run-1/send/25');
  push({ kind: RecordKind.EFFECT_INTENT, node: t('send'), key });
  push({ kind: RecordKind.EFFECT_ATTEMPT, node: t('send'), key, attempt: 1, lease: t('{}') });
  push({ kind: RecordKind.EFFECT_DONE, node: t('send'), key, result: t('{"ok":true}') });
  if (kind === 'failed') { push({ kind: RecordKind.RUN_FAILED, node: t('send'), code: t('E'), message: t('boom') }); return recs; }
  if (kind === 'parked') {
    push({ kind: RecordKind.NODE_COMPLETED, node: t('send'), next: t('approve'), stateForm: 0, state: t('{"n":6}') });
    push({ kind: RecordKind.INTERRUPT_PARKED, node: t('approve'), interruptId: t(`approve@${recs.length}`) });
    return recs;
  }
  push({ kind: RecordKind.NODE_COMPLETED, node: t('send'), next: new Uint8Array(0), stateForm: 0, state: t('{"n":6}') });
  push({ kind: RecordKind.RUN_COMPLETED });
  return recs;
}
const out = [];
for (const kind of ['completed', 'parked', 'failed'] as const) {
  const recs = build(kind);
  const summaries: string[] = [];
  for (let n = 1; n <= recs.length; n++) {
    const prefix = encodeLogV2(recs.slice(0, n) as never);
    const fed = reference.feed(EMPTY_SUMMARY, prefix);
    if (!fed.recovery.ok) throw new Error(`${kind} prefix ${n} does not recover`);
    summaries.push(hex(fed.summary));
  }
  out.push({ name: kind, log: hex(encodeLogV2(recs as never)), summaries });
}
writeFileSync(OUT, JSON.stringify({ note: 'Summaries written by the reference core of commit 5361384, the last to write version 1 of the summary encoding (every parked interrupt id listed, no last claim): one after each record of each log. Made by equivalence/make-summary-v1.mts run against that commit\'s sources (see its header); read by equivalence/summary-v1.test.ts.', logs: out }, null, 1) + '\n');
console.log('ok', out.map((l) => l.summaries.length));
