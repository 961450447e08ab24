/**
 * Both cores take bytes (Uint8Array, Buffer) and are total on them. Anything else (null, a string,
 * an ArrayBuffer, a plain array) is refused the same way by both, before either runs, with an
 * ArgumentInvalidError naming the argument: the Wasm core would otherwise fail inside its copy
 * into linear memory, which it must treat as a trap (the instance unusable from then on), and the
 * two cores would answer such inputs differently.
 */

import { ArgumentInvalidError } from '../errors.js';
import type { RecoveryCore } from './types.js';

/** `word` after "a", or "an" before a vowel sound (as display.ts's withArticle; the core imports only itself and errors.ts). */
function withArticle(word: string): string {
  return `${/^(?:[aeio]|u(?!ni|int|s[eu]))/i.test(word) ? 'an' : 'a'} ${word}`;
}

function checkBytes(operation: string, argument: string, value: unknown): void {
  if (value instanceof Uint8Array) return;
  const received =
    value === null || value === undefined ? String(value)
    : Array.isArray(value) ? 'an array'
    : withArticle(typeof value === 'object' ? (value as object).constructor?.name ?? 'object' : typeof value);
  throw new ArgumentInvalidError(`${operation}(${argument})`, 'a Uint8Array', received);
}

/** `core` with its byte arguments checked (requests given as objects are the core's to judge). */
export function withByteArguments(core: RecoveryCore): RecoveryCore {
  return {
    name: core.name,
    recover: (log) => (checkBytes('recover', 'log', log), core.recover(log)),
    admit: (log, request) => (checkBytes('admit', 'log', log), core.admit(log, request)),
    recoverEncoded: (log) => (checkBytes('recoverEncoded', 'log', log), core.recoverEncoded(log)),
    admitEncoded: (log, request) => (checkBytes('admitEncoded', 'log', log), checkBytes('admitEncoded', 'request', request), core.admitEncoded(log, request)),
    feed: (summary, chunk) => (checkBytes('feed', 'summary', summary), checkBytes('feed', 'chunk', chunk), core.feed(summary, chunk)),
    admitFrom: (summary, request) => (checkBytes('admitFrom', 'summary', summary), core.admitFrom(summary, request)),
    feedEncoded: (summary, chunk) => (checkBytes('feedEncoded', 'summary', summary), checkBytes('feedEncoded', 'chunk', chunk), core.feedEncoded(summary, chunk)),
    admitFromEncoded: (summary, request) =>
      (checkBytes('admitFromEncoded', 'summary', summary), checkBytes('admitFromEncoded', 'request', request), core.admitFromEncoded(summary, request)),
  };
}
