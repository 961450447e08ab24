/**
 * Both cores refuse an argument that is not bytes with the same typed error, before running; the
 * Wasm instance stays usable (a JavaScript error in its copy into linear memory used to count as a
 * trap and disable the instance for good).
 */

import { describe, expect, it } from 'vitest';
import { ArgumentInvalidError } from '../errors.js';
import { EMPTY_SUMMARY } from './types.js';
import { createCore, type CoreKind } from './index.js';

const NOT_BYTES: unknown[] = [null, undefined, 'log', 42, {}, [1, 2], new ArrayBuffer(4), new DataView(new ArrayBuffer(4))];

describe.each<CoreKind>(['reference', 'wasm'])('the %s core and arguments that are not bytes', (kind) => {
  it('refuses each with ArgumentInvalidError naming the call and argument, and keeps working', async () => {
    const core = await createCore(kind);
    const request = new Uint8Array([1]);
    const calls: Array<[string, (bad: never) => unknown]> = [
      ['recover(log)', (bad) => core.recover(bad)],
      ['recoverEncoded(log)', (bad) => core.recoverEncoded(bad)],
      ['admit(log)', (bad) => core.admit(bad, { tag: 'RESUME', interruptId: new Uint8Array([97]) })],
      ['admitEncoded(log)', (bad) => core.admitEncoded(bad, request)],
      ['admitEncoded(request)', (bad) => core.admitEncoded(new Uint8Array(), bad)],
      ['feed(summary)', (bad) => core.feed(bad, new Uint8Array())],
      ['feed(chunk)', (bad) => core.feed(EMPTY_SUMMARY, bad)],
      ['feedEncoded(chunk)', (bad) => core.feedEncoded(EMPTY_SUMMARY, bad)],
      ['admitFrom(summary)', (bad) => core.admitFrom(bad, { tag: 'RESUME', interruptId: new Uint8Array([97]) })],
      ['admitFromEncoded(request)', (bad) => core.admitFromEncoded(EMPTY_SUMMARY, bad)],
    ];
    for (const [argument, call] of calls) {
      for (const bad of NOT_BYTES) {
        let error: unknown;
        try {
          call(bad as never);
        } catch (e) {
          error = e;
        }
        expect(error, `${argument} with ${String(bad)}`).toBeInstanceOf(ArgumentInvalidError);
        expect(error).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', argument, expected: 'a Uint8Array' });
      }
    }
    expect(core.recover(new Uint8Array())).toMatchObject({ ok: true });
    expect(core.feed(EMPTY_SUMMARY, new Uint8Array()).ok).toBe(true);
  });
});
