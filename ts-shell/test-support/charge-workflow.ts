/**
 * Pure steps until `n` reaches `target` (default 5), an approval interrupt, then one effect: a run
 * that meets the store at each kind of write (a group of steps, a claim, an effect attempt). The
 * handler records each call's key in `calls`; a key in `failOnce` throws at its first call (its
 * attempt is released). For the SQLite tests of a disk that fails under a running store.
 */

import { z } from 'zod';
import { END, workflow } from '../src/workflow/workflow.js';

export function chargeAfterApproval(name: string, calls: string[], failOnce: Set<string>) {
  const State = z.object({ n: z.number(), target: z.number().default(5), ok: z.boolean().optional(), id: z.string().optional() });
  return workflow({ name, version: '1', state: State })
    .pure('step', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n >= s.target ? 'ask' : 'step') })
    .interrupt('ask', { resume: z.boolean(), apply: (_s, ok) => ({ ok }), next: 'charge' })
    .effect('charge', {
      run: async (_s, { idempotencyKey }) => {
        calls.push(idempotencyKey);
        if (failOnce.delete(idempotencyKey)) throw new Error('outside system down');
        return { id: `c-${idempotencyKey}` };
      },
      apply: (_s, r: { id: string }) => ({ id: r.id }),
      next: END,
    })
    .build();
}
