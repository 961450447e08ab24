/**
 * Hooks that hold a sequencer at the first fault point `point` whose info matches `when`, until
 * released: for tests that let another call or sequencer act while one is stopped mid-step.
 */

import type { FaultInfo, SequencerHooks } from '../src/faults.js';

export function pauseAt(point: string, when: (info: FaultInfo) => boolean): { hooks: SequencerHooks; paused: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const paused = new Promise<void>((r) => (reached = r));
  let held = false;
  const hooks: SequencerHooks = {
    async at(p, info) {
      if (!held && p === point && when(info)) {
        held = true;
        reached();
        await gate;
      }
    },
  };
  return { hooks, paused, release };
}
