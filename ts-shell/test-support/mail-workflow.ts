/** One effect, then the end: for CLI tests of an effect attempt in flight (also a workflow module). */

import { z } from 'zod';
import { END, workflow } from '../src/workflow/workflow.js';

export const mail = workflow({ name: 'mail', version: '1', state: z.object({ sent: z.string().optional() }) })
  .effect('send', { run: async () => 'ok', apply: (_s, result: string) => ({ sent: result }), next: END })
  .build();

export default mail;
export const sampleInput = {};
