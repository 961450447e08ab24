/**
 * A writer process for sqlite.test.ts ("processes racing on one file"): appends records to one run
 * with conditional appends of 1 to 3 records (so the one-statement path and the transaction path
 * race each other) until the run holds `targetRecords`, then prints the seqs it committed as one
 * JSON line. Each record's payload names its writer, so the parent can check that every stored
 * record was reported committed by exactly the writer whose payload it holds.
 *
 * Usage: node --import tsx sqlite-race.child.ts <db> <runId> <writer> <targetRecords> <startAtMs>
 * (every writer waits for the wall-clock time startAtMs, so they start together).
 */

import { SqliteStore } from '../src/store/sqlite.js';
import { testRecord } from '../src/testing/test-record.js';

const [db, runId, writer, target, startAt] = process.argv.slice(2) as [string, string, string, string, string];
const targetRecords = Number(target);

const record = (seq: number): Uint8Array => testRecord(seq, `${writer}:${seq}`);

const store = new SqliteStore(db, { synchronous: 'NORMAL', busyTimeoutMs: 20_000 });
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
const committed: number[] = [];
let expected = 0;
let attempt = 0;
while (expected < targetRecords) {
  const size = 1 + ((attempt++ + Number(writer.replace(/\D/g, '') || 0)) % 3);
  const batch = Array.from({ length: size }, (_, i) => record(expected + i));
  const outcome = await store.append(runId, expected, batch);
  if (outcome.committed) committed.push(...batch.map((_, i) => expected + i));
  expected = outcome.nextSeq;
}
await store.close();
process.stdout.write(`${JSON.stringify({ writer, committed })}\n`);
