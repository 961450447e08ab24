/** A small pure loop for CLI tests that need runs of their own: four steps, then the end. */

import { z } from 'zod';
import { END, workflow } from '../src/workflow/workflow.js';

export const counter = workflow({ name: 'counter', version: '1', state: z.object({ i: z.number().int() }) })
  .pure('tick', { run: (s) => ({ i: s.i + 1 }), next: (s) => (s.i < 3 ? 'tick' : END) })
  .build();

export default counter;
export const sampleInput = { i: 0 };
