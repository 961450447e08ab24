/**
 * The status-hint hole across releases (docs/guide.md, "Upgrading REMIT"): a store as a release
 * that writes no status hints uses it, and a workflow whose run such a release leaves running.
 */

import { z } from 'zod';
import type { Store } from '../src/store/store.js';
import { END, workflow } from '../src/workflow/workflow.js';

/** `store` as a release before status hints writes to it: records and summaries, never a hint. */
export function withoutHints(store: Store): Store {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'append') return (runId: string, seq: number, records: Uint8Array[], summary?: unknown) => target.append(runId, seq, records, summary as never);
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * An approval, then a node that throws while `crashing()` says so: the old release's process dies
 * inside it, leaving the run running after its resume.
 */
export function orderWorkflow(crashing: () => boolean) {
  return workflow({ name: 'order', version: '1', state: z.object({ approved: z.boolean().optional(), done: z.boolean().optional() }) })
    .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ approved: v.ok }), next: 'finish' })
    .pure('finish', {
      run: () => {
        if (crashing()) throw new Error('killed');
        return { done: true };
      },
      next: END,
    })
    .build();
}
