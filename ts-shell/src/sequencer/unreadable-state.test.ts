/**
 * A record that passes every check of the log format (its checksums and link recomputed over other
 * text, as only a hand edit or a bug could write it) but whose state is not JSON, or not a delta
 * that fits, is damage: status, continueRun and resume report LogCorruptError (UNREADABLE_STATE)
 * naming the run and the record's seq. Before, they threw the decoding's SyntaxError or TypeError,
 * and a delta { "o": 5 } was applied as no change at all.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeLog, encodeLogV2 } from '../core/codec.js';
import { createCore } from '../core/index.js';
import { LogCorruptError } from '../errors.js';
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
  });
});
