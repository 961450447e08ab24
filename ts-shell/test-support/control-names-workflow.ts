/**
 * A workflow whose every name holds terminal control sequences, for the tests of human-readable
 * output: the workflow name, its version, its node names (so the interrupt id), the state, and
 * the code and message of a fail(). Each holds an escape (ESC), a newline or carriage return, a C1
 * control or a bidi override (U+202E), any of which printed raw could clear the terminal, move the
 * cursor or forge a line of a table. Also a workflow module (`--workflow`): it parks at the
 * interrupt, and the resume value `{"ok":true}` leads to the fail().
 */

import { z } from 'zod';
import { fail } from '../src/errors.js';
import { END, workflow } from '../src/workflow/workflow.js';

const ESC = '\u001b';
export const HOSTILE = {
  workflow: `wf${ESC}[2J\nFORGED workflow`,
  version: `1\r${ESC}[K\u202e`,
  step: `step${ESC}[31m\nFORGED step`,
  ask: `ask${ESC}]0;title\u0007`,
  boom: `boom\r${ESC}[2K\u0085`,
  note: `note${ESC}[1m\u202e\u009b`,
  failureCode: `CODE${ESC}[5m`,
  failureMessage: `bad${ESC}[2J\nFORGED failure\u202e`,
} as const;

export const controlNames = workflow({ name: HOSTILE.workflow, version: HOSTILE.version, state: z.object({ i: z.number().int(), note: z.string() }) })
  .pure(HOSTILE.step, { run: (s) => ({ i: s.i + 1, note: HOSTILE.note }), next: HOSTILE.ask })
  .interrupt(HOSTILE.ask, { resume: z.object({ ok: z.boolean() }), apply: (s) => ({ i: s.i + 1 }), next: HOSTILE.boom })
  .pure(HOSTILE.boom, { run: () => fail(HOSTILE.failureCode, HOSTILE.failureMessage), next: END })
  .build();

export const workflows = [controlNames];
export const sampleInput = { i: 0, note: '' };
