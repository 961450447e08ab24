/**
 * Writes equivalence/fixtures/ from explicit record lists, with expectations computed by the
 * reference core. Run once when the format or the doc changes (`npx tsx equivalence/make-fixtures.ts`),
 * review the diff, commit. Tests never regenerate them: they check the committed bytes.
 *
 * Format-1 fixtures keep `recovery_api1_hex` as it is on disk (the encoding committed before format 2
 * existed) and this script refuses to write when the new encoding no longer projects onto it.
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chainValueBefore, concatBytes, encodeLog, encodeLogV2, encodeRecord } from 'remit/core';
import { encodeAdmissionRequest } from 'remit/core';
import { reference } from 'remit/core';
import { RecordKind, type AdmissionRequest, type LogRecord } from 'remit/core';
import { hex } from './compare.js';
import { decodedFixtureFields, FIXTURES_DIR, projectToApiV1, type FixtureJson } from './fixtures.js';

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
const logV2 = (...bodies: Body[]) => encodeLogV2(bodies.map((b, seq) => ({ ...b, seq }) as LogRecord));
/** Format 1 for the first `v1Count` records, format 2 (chained) after: a format-1 run continued. */
const logMixed = (v1Count: number, ...bodies: Body[]) => {
  const v1 = logOf(...bodies.slice(0, v1Count));
  const rest = bodies.slice(v1Count).map((b, i) => ({ ...b, seq: v1Count + i }) as LogRecord);
  return concatBytes([v1, encodeLogV2(rest, chainValueBefore(v1, v1.length))]);
};
const lease = (owner: string, untilMs: number) => t(JSON.stringify({ owner, leaseUntilMs: untilMs }));
const key2 = t('run-1/charge/2');
const intent2: Body = { kind: RecordKind.EFFECT_INTENT, node: t('charge'), key: key2 };
const attempt2 = (attempt: number, owner: string): Body =>
  ({ kind: RecordKind.EFFECT_ATTEMPT, node: t('charge'), key: key2, attempt, lease: lease(owner, 1_760_000_030_000 + attempt) });
const released2 = (attempt: number): Body =>
  ({ kind: RecordKind.EFFECT_RELEASED, node: t('charge'), key: key2, attempt, reason: t('{"error":"card service timed out"}') });
const charged2: Body = { kind: RecordKind.EFFECT_DONE, node: t('charge'), key: key2, result: t('{"receipt":"r-9"}') };
const happy2 = [started, prepared, intent2, attempt2(1, 'replica-a'), charged2, chargeCompleted, parked, claimed, approved, completed];

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
  // Format 2.
  {
    name: 'v2-completed-run',
    note: 'format 2: a whole run as the shell writes it (intent and attempt 1 in one append, then the completion)',
    log: logV2(...happy2),
  },
  {
    name: 'v2-attempted',
    note: 'format 2: crash after the intent and attempt 1 were appended: AWAIT_ATTEMPT names attempt 1 and where it is',
    log: logV2(...happy2.slice(0, 4)),
  },
  {
    name: 'v2-released',
    note: 'format 2: the handler threw and its owner released attempt 1: INVOKE_EFFECT claims attempt 2',
    log: logV2(...happy2.slice(0, 4), released2(1)),
  },
  {
    name: 'v2-taken-over',
    note: 'format 2: attempt 1 taken over (its lease expired) by attempt 2, which completed; 2 attempts reported',
    log: logV2(...happy2.slice(0, 4), attempt2(2, 'replica-b'), charged2, chargeCompleted),
  },
  {
    name: 'v2-done-without-attempt',
    note: 'format 2: EFFECT_DONE straight after the intent (no attempt claimed): IMPOSSIBLE_ORDER at seq 3 (the fence)',
    log: logV2(started, prepared, intent2, charged2),
  },
  {
    name: 'v2-bad-link',
    note: 'format 2: record 3 copied from run-2 (same seq, valid framing and checksum): BAD_LINK at seq 3',
    log: (() => {
      const mine = logV2(...happy2.slice(0, 5));
      const other = logV2({ ...started, runId: t('run-2') } as Body, ...happy2.slice(1, 5));
      const at = logV2(...happy2.slice(0, 3)).length;
      const end = logV2(...happy2.slice(0, 4)).length;
      return concatBytes([mine.subarray(0, at), other.subarray(at, end), mine.subarray(end)]);
    })(),
  },
  {
    name: 'v2-format-1-after-2',
    note: 'a format-1 record after a format-2 one: BAD_VERSION at seq 2',
    log: (() => {
      const head = logV2(started, prepared);
      return concatBytes([head, encodeRecord({ ...intent, seq: 2 } as LogRecord)]);
    })(),
  },
  {
    name: 'mixed-upgraded',
    note: 'a format-1 run (intent in format 1) continued by a format-2 shell: attempt 1, then the completion, in format 2',
    log: logMixed(3, started, prepared, intent, { ...attempt2(1, 'replica-a'), key: t('run-1/charge#1') } as Body,
      charged, chargeCompleted),
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

/** The API-1 encoding committed for a format-1 fixture (never regenerated), or null for a new one. */
function committedApi1(name: string): string | null {
  const path = `${FIXTURES_DIR}${name}.json`;
  if (!existsSync(path)) return null;
  const old = JSON.parse(readFileSync(path, 'utf8')) as Partial<FixtureJson>;
  // Before format 2 the JSON had no `formats` and its recovery_hex was the API-1 encoding.
  return old.recovery_api1_hex ?? (old.formats === undefined ? old.recovery_hex ?? null : null);
}

function fixtureJson(name: string, note: string, log: Uint8Array): FixtureJson {
  const admissions = requests.map(([description, req]) => {
    const bytes = encodeAdmissionRequest(req);
    return { request_hex: hex(bytes), request: description, admission_hex: hex(reference.admitEncoded(log, bytes)) };
  });
  admissions.push({ request_hex: '09', request: 'malformed (tag 9)', admission_hex: hex(reference.admitEncoded(log, Uint8Array.of(9))) });
  const decoded = decodedFixtureFields(log) as Omit<FixtureJson, 'note' | 'log_hex' | 'recovery_hex' | 'admissions'>;
  const recovery = reference.recoverEncoded(log);
  const json: FixtureJson = { note, log_hex: hex(log), ...decoded, recovery_hex: hex(recovery), admissions };
  if (!decoded.formats.includes(2)) {
    const api1 = committedApi1(name) ?? hex(projectToApiV1(recovery));
    if (hex(projectToApiV1(recovery)) !== api1) {
      throw new Error(`fixture ${name}: the format-1 log no longer recovers as it did (API-1 projection differs from the committed one)`);
    }
    json.recovery_api1_hex = api1;
  }
  return json;
}

mkdirSync(FIXTURES_DIR, { recursive: true });
for (const f of fixtures) {
  const json = fixtureJson(f.name, f.note, f.log);
  writeFileSync(`${FIXTURES_DIR}${f.name}.bin`, f.log);
  writeFileSync(`${FIXTURES_DIR}${f.name}.json`, `${JSON.stringify(json, null, 2)}\n`);
}
console.log(`wrote ${fixtures.length} fixtures to ${FIXTURES_DIR}`);
