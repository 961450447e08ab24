/**
 * Outcome coverage of a property run: a core wrapped so that every recovery and admission it
 * answers is counted (next-action tag or error code; verdict per request kind), so a test can
 * require that a generator reaches what it claims to reach, and name what it never reached.
 * Only the answers are read (decoded after the call); what the core is asked is unchanged.
 */

import { decodeAdmission, decodeRecovery, parseAdmissionRequest, type RecoveryCore } from 'remit/core';

/** The next-action tags of docs/core-api.md ("Recovery encoding"). */
export const ACTION_TAGS = [
  'RUN_PURE', 'BEGIN_EFFECT', 'INVOKE_EFFECT', 'AWAIT_ATTEMPT', 'FINISH_EFFECT', 'PARK', 'AWAIT_RESUME',
  'FINISH_INTERRUPT', 'FINISH_RUN', 'NONE',
] as const;

/** Each well-formed request kind, accepted and refused. */
export const ADMISSION_VERDICTS = ['RESUME', 'FORK_AT', 'CONTINUE_FROM'].flatMap((k) => [`${k} accepted`, `${k} refused`]);

export class OutcomeTally {
  readonly counts = new Map<string, number>();

  private inc(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  recovered(encoded: Uint8Array): void {
    const r = decodeRecovery(encoded);
    this.inc('recoveries');
    if (!r.ok) {
      this.inc('recovery errors');
      this.inc(`error ${r.code}`);
      return;
    }
    this.inc(r.action.tag);
    if (r.action.tag === 'INVOKE_EFFECT' && r.action.nextAttempt >= 2) this.inc('INVOKE_EFFECT after a release');
    if (r.action.tag === 'AWAIT_ATTEMPT' && r.action.attempt >= 2) this.inc('AWAIT_ATTEMPT after a takeover');
  }

  admitted(request: Uint8Array, encoded: Uint8Array): void {
    const q = parseAdmissionRequest(request);
    const a = decodeAdmission(encoded);
    this.inc(`${q?.tag ?? 'malformed'} ${a.accepted ? 'accepted' : 'refused'}`);
  }

  /** The keys of `required` never counted. */
  missing(required: readonly string[]): string[] {
    return required.filter((k) => this.get(k) === 0);
  }

  /** One line per key, sorted. */
  toString(): string {
    return [...this.counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}: ${v}`).join(', ');
  }
}

/** `core`, with its `recoverEncoded` and `admitEncoded` answers counted in `tally`. */
export function countingCore(core: RecoveryCore, tally: OutcomeTally): RecoveryCore {
  return {
    ...core,
    recoverEncoded: (log) => {
      const out = core.recoverEncoded(log);
      tally.recovered(out);
      return out;
    },
    admitEncoded: (log, request) => {
      const out = core.admitEncoded(log, request);
      tally.admitted(request, out);
      return out;
    },
  };
}
