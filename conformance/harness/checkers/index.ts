/** Every checker, one per property, in report order. */
import { checkpointValidity } from './checkpoint-validity.js';
import { consumeOnce } from './consume-once.js';
import { effectExactlyOnce } from './effect-exactly-once.js';
import { forkDeterminism } from './fork-determinism.js';
import { forkIntent } from './fork-intent.js';
import { liveness } from './liveness.js';
import { prefixContinuation } from './prefix-continuation.js';
import { recoveryDeterminism } from './recovery-determinism.js';
import type { CellRun } from '../observations.js';
import { PROPERTIES, type Checker, type PropertyId, type Verdict } from './verdict.js';

export const CHECKERS: readonly Checker[] = [
  prefixContinuation,
  effectExactlyOnce,
  forkDeterminism,
  checkpointValidity,
  consumeOnce,
  recoveryDeterminism,
  forkIntent,
  liveness,
];

export function checkAll(run: CellRun): Record<PropertyId, Verdict> {
  const out = {} as Record<PropertyId, Verdict>;
  for (const property of PROPERTIES) {
    const checker = CHECKERS.find((c) => c.property === property) as Checker;
    out[property] = checker.check(run);
  }
  return out;
}

export { PROPERTIES, type PropertyId, type Verdict } from './verdict.js';
