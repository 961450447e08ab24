/** counter-workflow.ts changed (version 2, a wider loop): a run of version 1 is refused under it (also a workflow module). */

import { z } from 'zod';
import { END, workflow } from '../src/workflow/workflow.js';

export const counterV2 = workflow({ name: 'counter', version: '2', state: z.object({ i: z.number().int() }) })
  .pure('tick', { run: (s) => ({ i: s.i + 1 }), next: (s) => (s.i < 5 ? 'tick' : END) })
  .build();

export default counterV2;
export const sampleInput = { i: 0 };
