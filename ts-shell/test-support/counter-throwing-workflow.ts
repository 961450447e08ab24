/**
 * counter-workflow.ts's definition (same name, version, nodes and schema, so the same fingerprint:
 * node code is not part of it) whose node code throws: a run of `counter` is driven under it and
 * fails with HandlerThrewError (also a workflow module), for the CLI's advice after a failure.
 */

import { z } from 'zod';
import { END, workflow } from '../src/workflow/workflow.js';

export const counterThrowing = workflow({ name: 'counter', version: '1', state: z.object({ i: z.number().int() }) })
  .pure('tick', {
    run: () => {
      throw new Error('tick is broken in this build');
    },
    next: (s) => (s.i < 3 ? 'tick' : END),
  })
  .build();

export default counterThrowing;
export const sampleInput = { i: 0 };
