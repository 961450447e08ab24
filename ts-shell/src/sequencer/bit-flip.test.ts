/**
 * One bit flipped in one stored record, as a property (docs/guide.md, "Damaged runs" and
 * "Fresh-process resume"; docs/log-format.md, "Record framing" and "Integrity classification").
 *
 * For a generated run (pure steps, effects, parks and resumes, sometimes left running by a crash
 * after a resume claim; long enough that a recovery summary is stored, or too short for one) and
 * ANY single bit of ANY stored record of it flipped (memory store, both cores):
 *
 * 1. `scrub` reports `damage` of kind `corrupt` naming exactly the flipped record's seq k, with the
 *    code the byte's field gives. A format-2 record is `header (12) | payload (L) | record_crc (4)
 *    | link (4)`, and the checks run header check, version, length, torn, CRC, link, seq, kind:
 *    - a bit of bytes 0..11 (payload_len, seq, version, kind, header_check): `BAD_HEADER` at k.
 *      Never `torn` and never another seq, even for a flip in payload_len: the 16-bit header
 *      check is verified before the length is trusted, and every single-bit change of bytes
 *      0..9 changes the low 16 bits of their CRC-32C (asserted below for all 80 bits; CRC is
 *      linear, so what a flip changes does not depend on the other bytes);
 *    - a bit of the payload or of record_crc (bytes 12..16+L): `BAD_CHECKSUM` at k;
 *    - a bit of the link (the last 4 bytes): `BAD_LINK` at k (the record itself passes its CRC,
 *      its link does not follow its predecessor; record 0's predecessor chain value is 0).
 * 2. From fresh processes on the damaged store, `status`, `continueRun` and (for a parked run)
 *    `resume` each either
 *    (a) throw the error of that damage: LogCorruptError naming the run, seq k, the same
 *        `logError` code and the same `advice` as scrub's damage, or
 *    (b) only when the store holds a recovery summary and 0 < k < its record count (the records
 *        between record 0 and the summary's end, which a fresh process does not check again: the
 *        guide's documented trade-off), give exactly the answer of the undamaged run.
 *    Nothing else: no other answer, no other error type. After an error the records are exactly
 *    as before; after an answer the records before are a prefix of the records after (appends
 *    only; the damaged record is never rewritten or removed).
 * 3. `runs()` lists the run as `damaged` with scrub's `damage`, and `inspect` reports it `damaged`
 *    with the same `damage`.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from '../core/index.js';
import type { RecoveryCore } from '../core/types.js';
import { crc32c } from '../core/crc32c.js';
import { LogCorruptError } from '../errors.js';
import { NO_HOOKS, type SequencerHooks } from '../faults.js';
import { Remit } from '../remit.js';
import { MemoryBacking, MemoryStore } from '../store/memory.js';
import { END, workflow, type Workflow } from '../workflow/workflow.js';
import type { RunResult } from './run-result.js';
import { copyBacking } from '../../test-support/memory-backing.js';

const State = z.object({ i: z.number().int(), pad: z.string(), sum: z.number().int() });

interface Shape {
  steps: number;
  /** Park at `approve` when i is a multiple of this after a pure step. */
  parkEvery: number;
  /** Call the effect `send` when i is a multiple of this after a pure step. */
  sendEvery: number;
  /** Resumes the writer makes while the run is parked. */
  resumes: number;
  /** The writer's last resume crashes right after its claim is appended: the run is left running. */
  crashAfterClaim: boolean;
}

function loop(shape: Shape): Workflow {
  const { steps, parkEvery, sendEvery } = shape;
  const after = (s: { i: number }) => (s.i >= steps ? END : s.i % parkEvery === 0 ? 'approve' : s.i % sendEvery === 0 ? 'send' : 'think');
  return workflow({ name: 'flip', version: '1', state: State })
    .pure('think', { run: (s) => ({ i: s.i + 1, pad: `${s.pad}${s.i % 10}`.slice(-24) }), next: after })
    .effect('send', { run: async (s) => ({ n: s.i }), apply: (s, r) => ({ sum: s.sum + (r as { n: number }).n }), next: 'think' })
    .interrupt('approve', { resume: z.number().int(), apply: (s, v) => ({ sum: s.sum + v }), next: 'think' })
    .build();
}

const WRITER = { instanceId: 'writer', now: () => 1_000 };
const READER = { instanceId: 'reader', now: () => 10_000_000 };
const RUN = 'b';

interface Written {
  wf: Workflow;
  backing: MemoryBacking;
}

async function write(core: RecoveryCore, shape: Shape): Promise<Written> {
  const wf = loop(shape);
  const backing = new MemoryBacking();
  let crashNow = false;
  const hooks: SequencerHooks = shape.crashAfterClaim
    ? { at: (point) => { if (point === 'resume.after-claim' && crashNow) throw new Error('crash'); } }
    : NO_HOOKS;
  const remit = new Remit(new MemoryStore({ backing }), core, [wf], hooks, {}, WRITER);
  try {
    let run = await remit.start(wf, { i: 0, pad: '', sum: 0 }, { runId: RUN });
    for (let k = 0; k < shape.resumes && run.status === 'parked'; k++) {
      crashNow = k === shape.resumes - 1;
      run = await remit.resume(RUN, run.interrupt.id, k + 2);
    }
  } catch (error) {
    if (!(error instanceof Error && error.message === 'crash')) throw error;
  }
  return { wf, backing };
}

type Op = 'status' | 'continueRun' | 'resume';
type Outcome = { ok: RunResult } | { error: unknown };

async function perform(backing: MemoryBacking, core: RecoveryCore, wf: Workflow, op: Op, interruptId: string): Promise<Outcome> {
  const remit = new Remit(new MemoryStore({ backing }), core, [wf], NO_HOOKS, {}, READER);
  try {
    if (op === 'status') return { ok: await remit.status(RUN) };
    if (op === 'continueRun') return { ok: await remit.continueRun(RUN) };
    return { ok: await remit.resume(RUN, interruptId, 5) };
  } catch (error) {
    return { error };
  }
}

/** Where in a record the flipped bit lies (format 2: header 12, payload L, record_crc 4, link 4). */
type Field = 'header' | 'payload' | 'crc' | 'link';
const CODE_OF: Record<Field, string> = { header: 'BAD_HEADER', payload: 'BAD_CHECKSUM', crc: 'BAD_CHECKSUM', link: 'BAD_LINK' };

/** The record to damage: a position in the log, or one of the records the summary makes special. */
type Target = number | 'first' | 'beforeSnapshot' | 'snapshot' | 'coveredLast' | 'afterSummary' | 'last';
interface Flip {
  target: Target;
  field: Field;
  bit: number;
}

const flipArb: fc.Arbitrary<Flip> = fc.record({
  target: fc.oneof(
    { weight: 3, arbitrary: fc.nat() },
    { weight: 2, arbitrary: fc.constantFrom<Target>('first', 'beforeSnapshot', 'snapshot', 'coveredLast', 'afterSummary', 'last') },
  ),
  field: fc.constantFrom<Field>('header', 'header', 'payload', 'crc', 'link'),
  bit: fc.nat(),
});

const shapeArb: fc.Arbitrary<Shape> = fc.record({
  steps: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 20, max: 90 })),
  parkEvery: fc.integer({ min: 5, max: 40 }),
  sendEvery: fc.integer({ min: 2, max: 7 }),
  resumes: fc.integer({ min: 0, max: 3 }),
  crashAfterClaim: fc.boolean(),
});

function seqOf(target: Target, records: number, summary: { recordCount: number; snapshotSeq: number } | undefined): number {
  if (typeof target === 'number') return target % records;
  const s = summary ?? { recordCount: records, snapshotSeq: Math.min(1, records - 1) };
  switch (target) {
    case 'first': return 0;
    case 'beforeSnapshot': return Math.max(0, s.snapshotSeq - 1);
    case 'snapshot': return s.snapshotSeq;
    case 'coveredLast': return s.recordCount - 1;
    case 'afterSummary': return Math.min(records - 1, s.recordCount);
    case 'last': return records - 1;
  }
}

/** The byte and bit mask of `flip` in a record of `length` bytes (a record without payload: its header). */
function positionOf(flip: Flip, length: number): { byte: number; mask: number; field: Field } {
  const payload = length - 20;
  const field: Field = flip.field === 'payload' && payload === 0 ? 'header' : flip.field;
  const [start, size] = field === 'header' ? [0, 12] : field === 'payload' ? [12, payload] : field === 'crc' ? [12 + payload, 4] : [16 + payload, 4];
  const bit = flip.bit % (size * 8);
  return { byte: start + (bit >> 3), mask: 1 << (bit & 7), field };
}

interface Expected {
  records: Uint8Array[];
  outcomes: Map<Op, Outcome>;
  interruptId: string;
}

async function undamaged(core: RecoveryCore, written: Written): Promise<Expected> {
  const records = written.backing.runs.get(RUN)!.records.map((r) => r.bytes.slice());
  const outcomes = new Map<Op, Outcome>();
  const status = await perform(copyBacking(written.backing), core, written.wf, 'status', '');
  expect(status).toHaveProperty('ok');
  const interruptId = 'ok' in status && status.ok.status === 'parked' ? status.ok.interrupt.id : '';
  outcomes.set('status', status);
  outcomes.set('continueRun', await perform(copyBacking(written.backing), core, written.wf, 'continueRun', ''));
  if (interruptId !== '') outcomes.set('resume', await perform(copyBacking(written.backing), core, written.wf, 'resume', interruptId));
  for (const outcome of outcomes.values()) expect(outcome).toHaveProperty('ok');
  return { records, outcomes, interruptId };
}

/** What was checked, so that the property is seen to reach every case it states. */
interface Seen {
  fields: Set<Field>;
  silent: number;
  thrown: number;
  withSummary: number;
  withoutSummary: number;
}

async function checkFlip(core: RecoveryCore, written: Written, expected: Expected, flip: Flip, seen: Seen): Promise<void> {
  const run = written.backing.runs.get(RUN)!;
  const summary = run.summary;
  const k = seqOf(flip.target, run.records.length, summary);
  const { byte, mask, field } = positionOf(flip, run.records[k]!.bytes.length);
  seen.fields.add(field);
  const damaged = copyBacking(written.backing);
  damaged.runs.get(RUN)!.records[k]!.bytes[byte]! ^= mask;
  const where = `record ${k} of ${run.records.length}, byte ${byte} mask ${mask} (${field}); summary ${summary ? `${summary.recordCount} records, snapshot ${summary.snapshotSeq}` : 'none'}`;

  // 1. scrub names exactly the flipped record, with the code its field gives.
  const remit = new Remit(new MemoryStore({ backing: damaged }), core, [written.wf], NO_HOOKS, {}, READER);
  const damage = (await remit.scrub(RUN)).damage;
  expect(damage, where).toMatchObject({ kind: 'corrupt', seq: k, code: CODE_OF[field], repairable: false });
  // 3. runs() and inspect agree with it.
  const listed = (await remit.runs()).find((r) => r.runId === RUN);
  expect(listed, where).toMatchObject({ status: 'damaged', damage });
  const inspection = await remit.inspect(RUN);
  expect(inspection.status, where).toBe('damaged');
  expect(inspection.damage, where).toEqual(damage);

  // 2. Fresh processes: the damage's typed error, or (a record the summary covers, not record 0) the undamaged answer.
  const mayBeUnseen = summary !== undefined && k > 0 && k < summary.recordCount;
  for (const op of expected.outcomes.keys()) {
    const store = copyBacking(damaged);
    const before = store.runs.get(RUN)!.records.map((r) => r.bytes.slice());
    const outcome = await perform(store, core, written.wf, op, expected.interruptId);
    const after = store.runs.get(RUN)!.records.map((r) => r.bytes);
    if ('error' in outcome) {
      seen.thrown += 1;
      const error = outcome.error;
      expect(error, `${op}: ${where}`).toBeInstanceOf(LogCorruptError);
      expect(error, `${op}: ${where}`).toMatchObject({ runId: RUN, seq: k, logError: damage!.code, advice: damage!.advice });
      expect(after, `${op} wrote after an error: ${where}`).toEqual(before);
    } else {
      seen.silent += 1;
      expect(mayBeUnseen, `${op} answered ${JSON.stringify(outcome.ok)}: ${where}`).toBe(true);
      expect(outcome, `${op}: ${where}`).toEqual(expected.outcomes.get(op));
      expect(after.length, `${op}: ${where}`).toBeGreaterThanOrEqual(before.length);
      expect(after.slice(0, before.length), `${op} changed a record: ${where}`).toEqual(before);
    }
  }
}

describe('the rule for header flips', () => {
  it('every single-bit change of bytes 0..9 changes the low 16 bits of their CRC-32C (so a header flip is never taken for a length)', () => {
    // CRC-32C is affine: the change a flipped bit makes does not depend on the other bytes.
    const header = Uint8Array.from([0x2c, 0x01, 0, 0, 7, 0, 0, 0, 2, 2]);
    const check = (b: Uint8Array) => crc32c(b, 0, 10) & 0xffff;
    for (let bit = 0; bit < 80; bit++) {
      const flipped = header.slice();
      flipped[bit >> 3]! ^= 1 << (bit & 7);
      expect(check(flipped), `bit ${bit}`).not.toBe(check(header));
    }
  });
});

describe.each(['reference', 'wasm'] as const)('one bit flipped in one stored record (%s core)', (coreKind) => {
  it('scrub names exactly that record; runs and inspect agree; status, continueRun and resume give its error or, for a record the summary covers, the undamaged answer', async () => {
    const core = await createCore(coreKind);
    const seen: Seen = { fields: new Set(), silent: 0, thrown: 0, withSummary: 0, withoutSummary: 0 };
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.array(flipArb, { minLength: 1, maxLength: 6 }), async (shape, flips) => {
        const written = await write(core, shape);
        seen[written.backing.runs.get(RUN)!.summary ? 'withSummary' : 'withoutSummary'] += 1;
        const expected = await undamaged(core, written);
        for (const flip of flips) await checkFlip(core, written, expected, flip, seen);
        // The undamaged store is untouched.
        expect(written.backing.runs.get(RUN)!.records.map((r) => r.bytes)).toEqual(expected.records);
      }),
      { numRuns: 60 },
    );
    expect(seen.fields.size).toBe(4);
    expect(seen.thrown).toBeGreaterThan(0);
    expect(seen.withSummary).toBeGreaterThan(0);
    expect(seen.withoutSummary).toBeGreaterThan(0);
  });
});

describe.each(['reference', 'wasm'] as const)('regression: a damaged record from the summary\'s snapshot on (%s core)', (coreKind) => {
  it('a flip in the head snapshot the stored summary covers is named by its seq and code, not as UNREADABLE_STATE at seq 0', async () => {
    // The shrunk counterexample of the property: the session read the head snapshot (seq 66 of 68,
    // covered by the summary, so not fed to the core) without checking its frame first, and
    // threw LogCorruptError UNREADABLE_STATE at seq 0 where scrub, runs and inspect say BAD_HEADER
    // at seq 66. Now the frames of the covered records read are checked, and a damaged one is
    // diagnosed from the whole log.
    const core = await createCore(coreKind);
    const written = await write(core, { steps: 23, parkEvery: 20, sendEvery: 2, resumes: 1, crashAfterClaim: false });
    const summary = written.backing.runs.get(RUN)!.summary!;
    expect(summary).toMatchObject({ recordCount: 68, snapshotSeq: 66 });
    const expected = await undamaged(core, written);
    const seen: Seen = { fields: new Set(), silent: 0, thrown: 0, withSummary: 0, withoutSummary: 0 };
    for (const field of ['header', 'payload', 'crc'] as const) {
      await checkFlip(core, written, expected, { target: 'snapshot', field, bit: 0 }, seen);
    }
    expect(seen).toMatchObject({ silent: 0, thrown: 3 * expected.outcomes.size });
  });
});
