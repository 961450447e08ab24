/**
 * Writes equivalence/fixtures/ from explicit record lists, with expectations computed by the
 * reference core. Run once when the format or the doc changes (`npx tsx equivalence/make-fixtures.ts`),
 * review the diff, commit. Tests never regenerate them: they check the committed bytes.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { concatBytes, encodeLog } from 'remit/core';
import { encodeAdmissionRequest } from 'remit/core';
import { reference } from 'remit/core';
import { RecordKind, type AdmissionRequest, type LogRecord } from 'remit/core';
import { hex } from './compare.js';
import { decodedFixtureFields, FIXTURES_DIR, type FixtureJson } from './fixtures.js';

const t = (s: string) => new TextEncoder().encode(s);
type Body = LogRecord extends infer R ? (R extends LogRecord ? Omit<R, 'seq'> : never) : never;

const started: Body = {
  kind: RecordKind.RUN_STARTED, runId: t('run-1'), workflow: t('order'), version: t('1'),
  fingerprint: t('sha256:5d41402abc4b2a76b9719d911017c592'), definition: t('{"nodes":["prepare","charge","approve"]}'),
  nodes: [{ name: t('prepare'), kind: 1 }, { name: t('charge'), kind: 2 }, { name: t('approve'), kind: 3 }],
  startNode: t('prepare'), state: t('{"total":0}'),
};
const prepared: Body = { kind: RecordKind.NODE_COMPLETED, node: t('prepare'), next: t('charge'), stateForm: 0, state: t('{"total":42}') };
const intent: Body = { kind: RecordKind.EFFECT_INTENT, node: t('charge'), key: t('run-1/charge#1') };
const charged: Body = { kind: RecordKind.EFFECT_DONE, node: t('charge'), key: t('run-1/charge#1'), result: t('{"receipt":"r-9"}') };
const chargeCompleted: Body = { kind: RecordKind.NODE_COMPLETED, node: t('charge'), next: t('approve'), stateForm: 1, state: t('{"set":{"receipt":"r-9"}}') };
const parked: Body = { kind: RecordKind.INTERRUPT_PARKED, node: t('approve'), interruptId: t('run-1/approve#1') };
const claimed: Body = { kind: RecordKind.RESUME_CLAIMED, interruptId: t('run-1/approve#1'), value: t('{"approved":true}') };
const approved: Body = { kind: RecordKind.NODE_COMPLETED, node: t('approve'), next: new Uint8Array(0), stateForm: 0, state: t('{"total":42,"approved":true}') };
const completed: Body = { kind: RecordKind.RUN_COMPLETED };

const logOf = (...bodies: Body[]) => encodeLog(bodies.map((b, seq) => ({ ...b, seq }) as LogRecord));

function flipByte(log: Uint8Array, at: number): Uint8Array {
  const out = log.slice();
  out[at] = out[at]! ^ 0x01;
  return out;
}

const happy = [started, prepared, intent, charged, chargeCompleted, parked, claimed, approved, completed];

const fixtures: Array<{ name: string; note: string; log: Uint8Array }> = [
  { name: 'empty', note: 'no bytes: status empty, NONE32 pointers', log: new Uint8Array(0) },
  { name: 'completed-run', note: 'a whole run: pure, effect, delta checkpoint, interrupt claimed, completed', log: logOf(...happy) },
  { name: 'parked', note: 'parked on an interrupt: AWAIT_RESUME', log: logOf(...happy.slice(0, 6)) },
  { name: 'intent-only', note: 'crash inside the effect handler: INVOKE_EFFECT with the recorded key', log: logOf(...happy.slice(0, 3)) },
  {
    name: 'forked',
    note: 'fork of checkpoint 1 (copy of records 0..1 + FORKED), then an intent under the new run id',
    log: logOf(started, prepared,
      { kind: RecordKind.FORKED, sourceRunId: t('run-1'), sourceSeq: 1, runId: t('run-2'), intent: t('{"why":"retry"}') },
      { kind: RecordKind.EFFECT_INTENT, node: t('charge'), key: t('run-2/charge#1') }),
  },
  {
    name: 'failed',
    note: 'the effect node threw: RUN_FAILED with its fields',
    log: logOf(started, prepared, intent, { kind: RecordKind.RUN_FAILED, node: t('charge'), code: t('E_CARD'), message: t('card declined') }),
  },
  {
    name: 'torn-tail',
    note: 'the last record was cut after 20 of its bytes: torn, not durable',
    log: (() => {
      const whole = logOf(...happy.slice(0, 4));
      const cut = logOf(...happy.slice(0, 3)).length + 20;
      return whole.slice(0, cut);
    })(),
  },
  {
    name: 'bad-checksum',
    note: 'one payload byte of record 2 flipped: BAD_CHECKSUM at seq 2, nothing after it loaded',
    log: flipByte(logOf(...happy), logOf(...happy.slice(0, 2)).length + 14),
  },
  {
    name: 'second-claim',
    note: 'a second RESUME_CLAIMED of the same interrupt: IMPOSSIBLE_ORDER at seq 7',
    log: logOf(...happy.slice(0, 7), claimed),
  },
  {
    name: 'bad-node-table',
    note: 'duplicate node names in RUN_STARTED: BAD_NODE_TABLE at seq 0',
    log: logOf({ ...started, nodes: [{ name: t('a'), kind: 1 }, { name: t('a'), kind: 2 }], startNode: t('a') } as Body),
  },
  {
    name: 'junk-after-log',
    note: 'a valid record followed by 7 stray bytes (too short for a header): torn tail of 7',
    log: concatBytes([logOf(started), Uint8Array.of(1, 2, 3, 4, 5, 6, 7)]),
  },
];

const requests: Array<[string, AdmissionRequest]> = [
  ['RESUME("run-1/approve#1")', { tag: 'RESUME', interruptId: t('run-1/approve#1') }],
  ['RESUME("other")', { tag: 'RESUME', interruptId: t('other') }],
  ['FORK_AT(1)', { tag: 'FORK_AT', seq: 1 }],
  ['FORK_AT(2)', { tag: 'FORK_AT', seq: 2 }],
  ['CONTINUE_FROM(2)', { tag: 'CONTINUE_FROM', seq: 2 }],
  ['CONTINUE_FROM(5)', { tag: 'CONTINUE_FROM', seq: 5 }],
];

function fixtureJson(note: string, log: Uint8Array): FixtureJson {
  const admissions = requests.map(([description, req]) => {
    const bytes = encodeAdmissionRequest(req);
    return { request_hex: hex(bytes), request: description, admission_hex: hex(reference.admitEncoded(log, bytes)) };
  });
  admissions.push({ request_hex: '09', request: 'malformed (tag 9)', admission_hex: hex(reference.admitEncoded(log, Uint8Array.of(9))) });
  return {
    note, log_hex: hex(log), ...(decodedFixtureFields(log) as Omit<FixtureJson, 'note' | 'log_hex' | 'recovery_hex' | 'admissions'>),
    recovery_hex: hex(reference.recoverEncoded(log)), admissions,
  };
}

mkdirSync(FIXTURES_DIR, { recursive: true });
for (const f of fixtures) {
  writeFileSync(`${FIXTURES_DIR}${f.name}.bin`, f.log);
  writeFileSync(`${FIXTURES_DIR}${f.name}.json`, `${JSON.stringify(fixtureJson(f.note, f.log), null, 2)}\n`);
}
console.log(`wrote ${fixtures.length} fixtures to ${FIXTURES_DIR}`);
