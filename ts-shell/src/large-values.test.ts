/**
 * Values too large to record. A value whose JSON text is longer than a JavaScript string can be,
 * or than a record's payload holds (1 GiB of UTF-8), is refused with ValueUnfaithfulError
 * TOO_LARGE naming the run (and node), before anything is written; the run goes on once the code
 * stops producing it. Before, the first escaped as V8's bare RangeError ("Invalid string length")
 * and the second as the codec's RecordEncodeError, neither naming the run.
 * These values take a few hundred MB to a GB of memory each: one test at a time.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { constants } from 'node:buffer';
import { MAX_PAYLOAD_LEN } from './core/framing.js';
import { createCore } from './core/index.js';
import { fail, ValueUnfaithfulError } from './errors.js';
import { Remit } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { MAX_VALUE_TEXT_BYTES } from './values.js';
import { END, workflow } from './workflow/workflow.js';

const core = await createCore('reference');
const State = z.object({ a: z.string(), b: z.string().optional() });

function tooLarge(error: unknown, subject: Record<string, unknown>, why: RegExp): void {
  expect(error).toBeInstanceOf(ValueUnfaithfulError);
  expect(error).toMatchObject({ code: 'REMIT_VALUE_UNFAITHFUL', reason: 'TOO_LARGE', ...subject });
  expect((error as Error).message).toMatch(/cannot be recorded: /);
  expect((error as Error).message).toMatch(why);
  expect((error as Error).message).toMatch(/nothing was written \[run /);
}

describe.sequential('values too large to record', () => {
  it('an input whose JSON text is longer than a JavaScript string: refused naming the run, no run created', async () => {
    const wf = workflow({ name: 'big', version: '1', state: State }).pure('p', { run: () => ({}), next: END }).build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const long = 'x'.repeat(3e8); // twice in the value: 6e8 characters of JSON, over V8's 2^29 - 24
    const error = await remit.start(wf, { a: long, b: long }, { runId: 'r1' }).catch((e: unknown) => e);
    tooLarge(error, { runId: 'r1', value: 'input' }, /longer than the longest string JavaScript can hold/);
    expect(await remit.store.readLog('r1')).toHaveLength(0);
    expect((await remit.start(wf, { a: 'small' }, { runId: 'r1' })).status).toBe('completed');
  }, 60_000);

  it('a state a node returns that is over a record\'s payload in UTF-8: refused naming run and node, the run goes on', async () => {
    let huge = true;
    const wf = workflow({ name: 'big2', version: '1', state: State })
      .pure('grow', { run: () => (huge ? { a: 'あ'.repeat(3.6e8) } : { a: 'fine' }), next: END }) // 3 bytes each: 1.08e9 bytes
      .build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const error = await remit.start(wf, { a: '' }, { runId: 'r2' }).catch((e: unknown) => e);
    tooLarge(error, { runId: 'r2', node: 'grow' }, new RegExp(`is 1080000\\d{3} bytes of UTF-8, over the ${MAX_VALUE_TEXT_BYTES} bytes a value's text may have \\(the longest text JavaScript reads back as one string; a record holds ${MAX_PAYLOAD_LEN}\\)`));
    const before = await remit.store.readLog('r2');
    expect(before.length).toBeGreaterThan(0);
    huge = false;
    expect(await remit.continueRun('r2')).toMatchObject({ status: 'completed', state: { a: 'fine' } });
  }, 60_000);

  it('a value of one byte more than JavaScript reads back as one string (under a record\'s 1 GiB) is refused: before, it was written and its record could never be read', async () => {
    const wf = workflow({ name: 'big3', version: '1', state: State }).pure('p', { run: () => ({}), next: END }).build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    expect(MAX_VALUE_TEXT_BYTES).toBe(constants.MAX_STRING_LENGTH);
    // {"a":"…"}: 8 bytes around two-byte characters (é) and one ASCII letter, MAX_VALUE_TEXT_BYTES + 1 in all.
    const twoByte = Math.floor((MAX_VALUE_TEXT_BYTES + 1 - 8) / 2);
    const a = 'é'.repeat(twoByte) + 'x'.repeat(MAX_VALUE_TEXT_BYTES + 1 - 8 - twoByte * 2);
    expect(Buffer.byteLength(JSON.stringify({ a }), 'utf8')).toBe(MAX_VALUE_TEXT_BYTES + 1);
    const error = await remit.start(wf, { a }, { runId: 'r3' }).catch((e: unknown) => e);
    tooLarge(error, { runId: 'r3', value: 'input' }, new RegExp(`is ${MAX_VALUE_TEXT_BYTES + 1} bytes of UTF-8, over the ${MAX_VALUE_TEXT_BYTES} bytes`));
    expect(await remit.store.readLog('r3')).toHaveLength(0);
  }, 120_000);

  it('an effect result of that size is refused and its attempt released (before: recorded, then unreadable for good, after the effect happened)', async () => {
    let big: string | null = 'é'.repeat(270_000_000); // 540 MB of UTF-8: 270 M characters, a string JavaScript holds
    const keys: string[] = [];
    const wf = workflow({ name: 'big4', version: '1', state: z.object({ n: z.number().optional() }) })
      .effect('fetch', { run: (_s, { idempotencyKey }) => (keys.push(idempotencyKey), big ?? 'small'), apply: (_s, v) => ({ n: v.length }), next: END })
      .build();
    const remit = new Remit(new MemoryStore(), core, [wf]);
    const error = await remit.start(wf, {}, { runId: 'r4' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'REMIT_VALUE_UNFAITHFUL', reason: 'TOO_LARGE', runId: 'r4', node: 'fetch' });
    expect((error as Error).message).toMatch(/is 540000002 bytes of UTF-8, over the .*; EFFECT_RELEASED was recorded \(attempt 1 is given up/);
    big = null;
    expect(await remit.continueRun('r4')).toMatchObject({ status: 'completed', state: { n: 5 } });
    expect(keys).toEqual(['r4/fetch/1', 'r4/fetch/1']);
  }, 120_000);

  it('a failure message over that size is cut, saying so, and the failed run reads back (before: written whole, then every read threw ERR_STRING_TOO_LONG)', async () => {
    const wf = workflow({ name: 'big5', version: '1', state: State })
      .pure('p', { run: () => fail('BOOM', 'é'.repeat(300_000_000)), next: END }) // 600 MB of UTF-8
      .build();
    const store = new MemoryStore();
    const failed = await new Remit(store, core, [wf]).start(wf, { a: '' }, { runId: 'r5' });
    expect(failed).toMatchObject({ status: 'failed', failure: { code: 'BOOM', node: 'p' } });
    const message = (failed as { failure: { message: string } }).failure.message;
    expect(message).toMatch(new RegExp(`… \\(cut to \\d+ of 300000000 characters: the log keeps a failure text of at most ${MAX_VALUE_TEXT_BYTES} bytes of UTF-8\\)$`));
    expect(Buffer.byteLength(message, 'utf8')).toBeLessThanOrEqual(MAX_VALUE_TEXT_BYTES);
    const fresh = new Remit(new MemoryStore({ backing: store.backing }), core, [wf]);
    expect(await fresh.status('r5')).toMatchObject({ status: 'failed', failure: { code: 'BOOM', message } });
  }, 120_000);
});

