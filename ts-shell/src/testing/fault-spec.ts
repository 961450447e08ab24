/**
 * Fault specifications for child processes and tests: "point[:KIND][@node][#n]" picks the n-th
 * time (default 1st) the sequencer reaches `point` with a batch containing KIND and/or at `node`.
 * Examples: "effect.after-handler@chargeCard", "append.after:EFFECT_INTENT#2", "pure.before-return".
 */

import { FAULT_POINTS, isFaultPoint, type FaultInfo, type FaultPoint, type SequencerHooks } from '../faults.js';

export interface FaultSpec {
  point: FaultPoint;
  kind?: string;
  node?: string;
  occurrence: number;
}

export function parseFaultSpec(text: string): FaultSpec {
  const match = /^([a-z.-]+)(?::([A-Z_]+))?(?:@([^#]+))?(?:#(\d+))?$/.exec(text.trim());
  if (!match || !isFaultPoint(match[1]!)) {
    throw new Error(`bad fault spec ${JSON.stringify(text)}: expected point[:KIND][@node][#n], point one of ${FAULT_POINTS.join(', ')}`);
  }
  const spec: FaultSpec = { point: match[1] as FaultPoint, occurrence: match[4] ? Number(match[4]) : 1 };
  if (match[2]) spec.kind = match[2];
  if (match[3]) spec.node = match[3];
  if (spec.occurrence < 1) throw new Error(`bad fault spec ${text}: occurrence counts from 1`);
  return spec;
}

export function formatFaultSpec(spec: FaultSpec): string {
  return `${spec.point}${spec.kind ? `:${spec.kind}` : ''}${spec.node ? `@${spec.node}` : ''}${spec.occurrence !== 1 ? `#${spec.occurrence}` : ''}`;
}

export function faultMatches(spec: FaultSpec, point: FaultPoint, info: FaultInfo): boolean {
  if (point !== spec.point) return false;
  if (spec.kind && !(info.kinds ?? []).includes(spec.kind)) return false;
  if (spec.node && info.node !== spec.node) return false;
  return true;
}

/** Hooks that call `onFault` the `occurrence`-th time the spec matches, and never again. */
export function hooksFor(spec: FaultSpec, onFault: (point: FaultPoint, info: FaultInfo) => void | Promise<void>): SequencerHooks {
  let seen = 0;
  return {
    async at(point, info) {
      if (!faultMatches(spec, point, info)) return;
      seen += 1;
      if (seen === spec.occurrence) await onFault(point, info);
    },
  };
}

/** The error a thrown-fault hook throws; tests recognise it by class. */
export class InjectedFault extends Error {
  constructor(readonly point: FaultPoint, readonly info: FaultInfo) {
    super(`injected fault at ${point} (run ${info.runId}, seq ${info.seq}${info.node ? `, node ${info.node}` : ''})`);
    this.name = 'InjectedFault';
  }
}
