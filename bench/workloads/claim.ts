/**
 * The consume-once gate alone, as resume() runs it in a process that has not opened the run yet
 * (ts-shell/src/remit.ts, resume; sequencer/run-session.ts, admit): read the log, feed it to the
 * core from the empty summary, admit from that summary (admitFrom), append RESUME_CLAIMED at the
 * admitted seq; on a lost append, read again. Shared by the SQLite and PostgreSQL gate suites.
 */

import { EMPTY_SUMMARY, RecordKind, chainValueBefore, encodeRecordV2, type RecoveryCore } from 'remit/core';
import type { Store } from 'remit';

/** True when this racer's claim committed, false when the core refused it (another racer won). */
export async function claimOnce(store: Store, core: RecoveryCore, runId: string, interruptId: Uint8Array, value: Uint8Array): Promise<boolean> {
  for (;;) {
    const log = await store.readLog(runId);
    const fed = core.feed(EMPTY_SUMMARY, log);
    if (!fed.ok || !fed.recovery.ok) throw new Error(`run ${runId}: the parked log does not recover`);
    const admission = core.admitFrom(fed.summary, { tag: 'RESUME', interruptId });
    if (!admission.accepted) return false;
    const claim = encodeRecordV2({ kind: RecordKind.RESUME_CLAIMED, seq: admission.seq, interruptId, value }, chainValueBefore(log, admission.offset));
    if ((await store.append(runId, admission.seq, [claim])).committed) return true;
  }
}
