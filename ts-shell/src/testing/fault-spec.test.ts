/**
 * Fault specs a test can rely on: a spec that could never fire (an unknown point, a kind that is
 * not a record kind, a kind at a point that carries none) is refused when it is parsed, so a test
 * cannot pass without its fault having happened.
 */

import { describe, expect, it } from 'vitest';
import { FAULT_POINTS } from '../faults.js';
import { formatFaultSpec, hooksFor, parseFaultSpec } from './fault-spec.js';

describe('parseFaultSpec', () => {
  it('parses every point, and the kinds each point carries, and formats them back', () => {
    for (const point of FAULT_POINTS) expect(formatFaultSpec(parseFaultSpec(point))).toBe(point);
    for (const text of ['append.after:EFFECT_INTENT#2', 'append.before:EFFECT_DONE@chargeCard', 'resume.after-claim:RESUME_CLAIMED', 'fork.after-store:FORKED', 'effect.after-handler@chargeCard']) {
      expect(formatFaultSpec(parseFaultSpec(text))).toBe(text);
    }
  });

  it.each([
    ['nope.point', /point one of/],
    ['append.after:EFFECT_INTNET', /record kinds: RUN_STARTED/],
    ['effect.after-handler:EFFECT_INTENT', /effect\.after-handler carries no record kinds/],
    ['resume.after-claim:NODE_COMPLETED', /carries only RESUME_CLAIMED/],
    ['append.after#0', /occurrence counts from 1/],
  ])('refuses %s, which could never fire', (text, message) => {
    expect(() => parseFaultSpec(text)).toThrow(message);
  });

  it('hooksFor refuses a string instead of a parsed spec', () => {
    expect(() => hooksFor('effect.after-handler' as never, () => {})).toThrow(/parseFaultSpec/);
  });
});
