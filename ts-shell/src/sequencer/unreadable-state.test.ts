/**
 * A record that passes every check of the log format (its checksums and link recomputed over other
 * text, as only a hand edit or a bug could write it) but whose state is not JSON, or not a delta
 * that fits, is damage: status, continueRun and resume report LogCorruptError (UNREADABLE_STATE)
 * naming the run and the record's seq. Before, they threw the decoding's SyntaxError or TypeError,
 * and a delta { "o": 5 } was applied as no change at all. Likewise an EFFECT_DONE result or a
 * RESUME_CLAIMED value that is not JSON (UNREADABLE_VALUE), when the run comes to apply it. scrub,
 * which re-verifies every record, reports each as corrupt damage at its seq, and repair refuses it
 * (the record's content is lost; removing it would lose a durable step); both find the controls
 * sound.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeLog, encodeLogV2 } from '../core/codec.js';
import { StateForm } from '../core/types.js';
import { createCore } from '../core/index.js';
import { LogCorruptError, RepairRefusedError } from '../errors.js';
import { Remit } from '../remit.js';
import { MemoryStore } from '../store/memory.js';
import { END, workflow } from '../workflow/workflow.js';

const core = await createCore('reference');
const wf = workflow({ name: 'w', version: '1', state: z.object({ n: z.number(), pad: z.string() }) })
  .pure('a', { run: (s) => ({ n: s.n + 1 }), next: 'b' })
  .pure('b', { run: (s) => ({ n: s.n + 1 }), next: 'c' })
  .interrupt('c', { resume: z.object({}), apply: () => ({}), next: END })
  .build();

/** A parked run whose record 2 (b's NODE_COMPLETED, a delta) holds `stateText`, every record re-framed and re-chained. */
async function runWithState(stateText: string | null): Promise<Remit> {
  const store = new MemoryStore();
  const first = await new Remit(store, core, [wf]).start(wf, { n: 0, pad: 'x'.repeat(400) }, { runId: 'r' });
  expect(first.status).toBe('parked');
  if (stateText !== null) {
    const run = store.backing.runs.get('r')!;
    const decoded = decodeLog(concat(run.records.map((r) => r.bytes)));
    expect(decoded.records[2]).toMatchObject({ kind: 2, stateForm: 1 });
    const records = decoded.records.map((r, i) => (i === 2 ? { ...r, state: new TextEncoder().encode(stateText) } : r));
    const log = encodeLogV2(records);
    const again = decodeLog(log);
    expect(again.error).toBeNull();
    run.records.forEach((stored, i) => {
      stored.bytes = log.slice(again.offsets[i], again.offsets[i + 1] ?? log.length);
    });
  }
  return new Remit(store, core, [wf]);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function refusal(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return { error: (error as Error).constructor.name, logError: (error as LogCorruptError).logError, runId: (error as LogCorruptError).runId, seq: (error as LogCorruptError).seq };
  }
  return 'no error';
}

describe('a framed record whose state cannot be read', () => {
  it('as written (the control): the run reads back and resumes', async () => {
    const remit = await runWithState(null);
    expect((await remit.scrub('r')).damage).toBeNull();
    expect((await remit.status('r')).state).toMatchObject({ n: 2 });
    expect((await remit.resume('r', 'c@3', {})).status).toBe('completed');
  });

  it.each([
    ['not JSON', '{oops'],
    ['JSON that is not a delta', '{"q":5}'],
    ['null', 'null'],
    ['a number', '5'],
    ['an object patch that is not an object', '{"o":5}'],
    ['deleted keys that are not strings', '{"o":{},"d":[1]}'],
    ['append items that are not an array', '{"a":5}'],
    ['a replacement of the whole state by a non-object', '{"r":5}'],
  ])('%s: status, continueRun and resume give LogCorruptError UNREADABLE_STATE at its seq', async (_label, text) => {
    const remit = await runWithState(text);
    const expected = { error: 'LogCorruptError', logError: 'UNREADABLE_STATE', runId: 'r', seq: 2 };
    expect(await refusal(() => remit.status('r'))).toEqual(expected);
    expect(await refusal(() => remit.continueRun('r'))).toEqual(expected);
    expect(await refusal(() => remit.resume('r', 'c@3', {}))).toEqual(expected);
    await expectScrubAndRepairToFind(remit, 'UNREADABLE_STATE', 2);
  });
});

/** scrub reports the record as corrupt damage (not repairable); repair refuses, naming its seq; nothing changes. */
async function expectScrubAndRepairToFind(remit: Remit, code: string, seq: number): Promise<void> {
  const before = (await remit.store.readRecords('r')).map((r) => r.bytes.slice());
  const report = await remit.scrub('r');
  expect(report.damage).toMatchObject({ kind: 'corrupt', code, seq, repairable: false });
  expect(report.logStatus).toBeNull();
  const refused = await remit.repair('r').catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(RepairRefusedError);
  expect(refused).toMatchObject({ runId: 'r', seq });
  expect((await remit.store.readRecords('r')).map((r) => r.bytes)).toEqual(before);
}

describe('a framed EFFECT_DONE result or RESUME_CLAIMED value that is not JSON', () => {
  const withEffect = workflow({ name: 'v', version: '1', state: z.object({ k: z.string().optional(), ok: z.boolean().optional() }) })
    .effect('e', { run: async () => ({ k: 'v' }), apply: (_s, r) => ({ k: r.k }), next: 'c' })
    .interrupt('c', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ ok: v.ok }), next: END })
    .build();

  /** The completed run's records up to and including the first of `kind`, that one's `field` set to `text`, re-framed and re-chained, as a running run. */
  async function cutAt(kind: number, field: 'result' | 'value', text: string): Promise<{ remit: Remit; seq: number }> {
    const source = new MemoryStore();
    const first = new Remit(source, core, [withEffect]);
    const parked = await first.start(withEffect, {}, { runId: 'r' });
    await first.resume('r', parked.status === 'parked' ? parked.interrupt.id : '', { ok: true });
    const records = decodeLog(concat((await source.readRecords('r')).map((r) => r.bytes))).records;
    const seq = records.findIndex((r) => r.kind === kind);
    const log = encodeLogV2(records.slice(0, seq + 1).map((r, i) => (i === seq ? { ...r, [field]: new TextEncoder().encode(text) } : r)));
    const again = decodeLog(log);
    const store = new MemoryStore();
    await store.append('r', 0, again.records.map((_, i) => log.slice(again.offsets[i], again.offsets[i + 1] ?? log.length)), undefined, 'running');
    return { remit: new Remit(store, core, [withEffect]), seq };
  }

  it('is LogCorruptError UNREADABLE_VALUE at its seq from continueRun and recoverAll, not a SyntaxError or "node code threw"', async () => {
    // Before, an unreadable EFFECT_DONE result was a bare SyntaxError, and an unreadable claim
    // HandlerThrewError ("node code threw"), as if the interrupt's apply had thrown.
    for (const [kind, field] of [[4, 'result'], [6, 'value']] as const) {
      const { remit, seq } = await cutAt(kind, field, '{oops');
      const expected = { error: 'LogCorruptError', logError: 'UNREADABLE_VALUE', runId: 'r', seq };
      expect(await refusal(() => remit.continueRun('r'))).toEqual(expected);
      const [outcome] = await remit.recoverAll();
      expect(outcome && 'error' in outcome ? { error: (outcome.error as Error).constructor.name, logError: (outcome.error as LogCorruptError).logError } : outcome).toEqual({ error: 'LogCorruptError', logError: 'UNREADABLE_VALUE' });
      await expectScrubAndRepairToFind(remit, 'UNREADABLE_VALUE', seq);
    }
  });

  it('read as written (the control), the run finishes from the recorded result and claim', async () => {
    for (const [kind, field, text] of [[4, 'result', '{"k":"w"}'], [6, 'value', '{"ok":false}']] as const) {
      const { remit } = await cutAt(kind, field, text);
      expect((await remit.scrub('r')).damage).toBeNull();
      const done = await remit.continueRun('r');
      expect(done.status).toBe(kind === 4 ? 'parked' : 'completed');
      expect(done.state).toMatchObject(kind === 4 ? { k: 'w' } : { k: 'v', ok: false });
    }
  });
});

describe('a fork at a checkpoint whose state cannot be read', () => {
  /** A parked run whose record 1 holds an unreadable state and record 2 a snapshot that hides it from the head. */
  async function hiddenDamage(): Promise<{ remit: Remit; store: MemoryStore }> {
    const store = new MemoryStore();
    await new Remit(store, core, [wf]).start(wf, { n: 0, pad: 'x'.repeat(400) }, { runId: 'r' });
    const run = store.backing.runs.get('r')!;
    const decoded = decodeLog(concat(run.records.map((r) => r.bytes)));
    const snapshot = new TextEncoder().encode(JSON.stringify({ n: 2, pad: 'x'.repeat(400) }));
    const records = decoded.records.map((r, i) => (i === 1 ? { ...r, state: new TextEncoder().encode('{oops') } : i === 2 ? { ...r, stateForm: StateForm.SNAPSHOT, state: snapshot } : r));
    const log = encodeLogV2(records);
    const again = decodeLog(log);
    run.records.forEach((stored, i) => {
      stored.bytes = log.slice(again.offsets[i], again.offsets[i + 1] ?? log.length);
    });
    return { remit: new Remit(store, core, [wf]), store };
  }

  it('is refused as LogCorruptError UNREADABLE_STATE at that seq, and no run is made (before, the fork was born damaged)', async () => {
    const { remit, store } = await hiddenDamage();
    // The source reads: its head state comes from the snapshot at seq 2.
    expect((await remit.status('r')).state).toMatchObject({ n: 2 });
    expect(await refusal(() => remit.fork('r', 1, { newRunId: 'copy' }))).toEqual({ error: 'LogCorruptError', logError: 'UNREADABLE_STATE', runId: 'r', seq: 1 });
    expect(store.backing.runs.has('copy')).toBe(false);
    // A fork at the snapshot copies the damaged record too, but its state is read from the snapshot.
    const fork = await remit.fork('r', 2, { newRunId: 'later' });
    expect((await remit.status(fork.runId)).state).toMatchObject({ n: 2 });
  });
});
