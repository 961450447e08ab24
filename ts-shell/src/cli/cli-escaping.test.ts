/**
 * Text from the log and the workflow (workflow and node names, versions, interrupt ids, run ids,
 * fail() codes and messages, state, fork intents, error messages) is printed by the human output
 * of every command with its control characters escaped (display.ts): a name holding ESC [2J, a
 * carriage return or a newline cannot clear the terminal, move the cursor or forge a line of a
 * table. --json prints the exact values.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../core/index.js';
import { displayText } from '../display.js';
import { renderInspection } from '../inspect.js';
import { isWellFormedUnicode } from '../json.js';
import { Remit } from '../remit.js';
import { SqliteStore } from '../store/sqlite.js';
import { cliInProcess } from '../../test-support/cli-in-process.js';
import { controlNames, HOSTILE } from '../../test-support/control-names-workflow.js';
import { describeResult } from './output.js';

const MODULE = fileURLToPath(new URL('../../test-support/control-names-workflow.ts', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'remit-cli-escaping-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const remit = cliInProcess(cwd);

/** Characters no human output may print raw: C0 but the newline between lines, DEL, C1, bidi controls, line separators. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;

/** Output that prints no control character, forges no line, and shows `texts` escaped. */
function expectEscaped(output: string, ...texts: string[]): void {
  expect(output).not.toMatch(RAW_CONTROL);
  expect(isWellFormedUnicode(output)).toBe(true);
  // Each hostile text's "FORGED ..." follows its escaped newline on the same line.
  for (const line of output.split('\n')) expect(line).not.toMatch(/^\s*FORGED/);
  for (const text of texts) expect(output).toContain(displayText(text));
}

describe('human output of text holding control characters', () => {
  const db = join(cwd, 'hostile.db');
  const runId = 'r1\u202e';
  const cli = (...args: string[]) => remit('--db', db, '--workflow', MODULE, ...args);

  it('run, inspect, runs, resume, continue, fork, repair and scrub print it escaped; --json prints it exactly', async () => {
    const started = await cli('run', '--run-id', runId);
    expect(started.code, started.stderr).toBe(0);
    expectEscaped(started.stdout, runId, HOSTILE.workflow, HOSTILE.ask, JSON.stringify(HOSTILE.note));
    expect(started.stdout).toContain('wf\\u{1b}[2J\\u{a}FORGED workflow');
    expect(started.stdout.split('\n')[0]).toMatch(/^run r1\\u\{202e\} \(wf\\u\{1b\}\[2J\\u\{a\}FORGED workflow\): parked, head seq 2$/);

    const parked = await cli('--json', 'inspect', runId);
    expect(parked.json()).toMatchObject({ runId, workflow: HOSTILE.workflow, version: HOSTILE.version });
    const interruptId = `${HOSTILE.ask}@2`;
    expect(parked.json().nextAction).toBe(`AWAIT_RESUME ${interruptId}`);

    const inspected = await cli('inspect', runId);
    expect(inspected.code).toBe(0);
    expectEscaped(inspected.stdout, runId, HOSTILE.workflow, HOSTILE.version, HOSTILE.step, HOSTILE.ask, interruptId);

    const listed = await cli('runs');
    expect(listed.code).toBe(0);
    expectEscaped(listed.stdout, runId, HOSTILE.workflow, interruptId);
    expect(listed.stdout.trimEnd().split('\n')).toHaveLength(2);

    // A refused resume names the interrupt in its message (stderr), escaped; --json keeps it exact.
    const refused = await cli('resume', runId, interruptId, '{"ok":"yes"}');
    expect(refused.code).toBe(5);
    expectEscaped(refused.stderr, interruptId);
    expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
    const refusedJson = await cli('--json', 'resume', runId, interruptId, '{"ok":"yes"}');
    expect(refusedJson.json()).toMatchObject({ error: { code: 'REMIT_RESUME_VALUE_INVALID', interruptId, runId } });

    const failed = await cli('resume', runId, interruptId, '{"ok":true}');
    expect(failed.code).toBe(10);
    expectEscaped(failed.stdout, HOSTILE.boom, HOSTILE.failureCode, HOSTILE.failureMessage);
    const failedJson = await cli('--json', 'continue', runId);
    expect(failedJson.json()).toMatchObject({ status: 'failed', failure: { node: HOSTILE.boom, code: HOSTILE.failureCode, message: HOSTILE.failureMessage } });
    const continued = await cli('continue', runId);
    expect(continued.code).toBe(10);
    expectEscaped(continued.stdout, HOSTILE.boom, HOSTILE.failureCode, HOSTILE.failureMessage);

    const inspectedFailed = await cli('inspect', runId);
    expectEscaped(inspectedFailed.stdout, HOSTILE.boom, HOSTILE.failureCode, HOSTILE.failureMessage);

    const intent = `why\u001b[2J\nFORGED intent\u202e\u0085`;
    const forked = await cli('fork', runId, '1', '--intent', intent, '--run-id', 'r1.fork\u202e', '--continue');
    expect(forked.code, forked.stderr).toBe(0);
    expectEscaped(forked.stdout, runId, 'r1.fork\u202e', HOSTILE.ask);
    const inspectedFork = await cli('inspect', 'r1.fork\u202e');
    expectEscaped(inspectedFork.stdout, JSON.stringify(intent), runId);

    for (const args of [['repair', runId], ['scrub', runId]]) {
      const out = await cli(...args);
      expect(out.code, args.join(' ')).toBe(0);
      expectEscaped(out.stdout, runId);
    }
    // Commander's own refusal quotes the command line, escaped too.
    const unknown = await cli('runs', '--frob\u001b[2J\rX');
    expect(unknown.code).toBe(2);
    expectEscaped(unknown.stderr, '--frob\u001b[2J\rX');
    // A run id the store does not have is named, escaped, by the error on stderr.
    const missing = await cli('inspect', 'gone\u202e');
    expect(missing.code).toBe(3);
    expectEscaped(missing.stderr, 'gone\u202e');
  });

  it('the library\'s status and renderInspection, rendered for people, escape it too', async () => {
    const store = new SqliteStore(join(cwd, 'library.db'));
    const library = new Remit(store, await createCore('reference'), [controlNames]);
    await library.start(controlNames, { i: 0, note: '' }, { runId: 'lib' });
    const status = await library.status('lib');
    expect(status.workflow).toBe(HOSTILE.workflow);
    expectEscaped(describeResult(status), HOSTILE.workflow, HOSTILE.ask, JSON.stringify(HOSTILE.note));
    expectEscaped(renderInspection(await library.inspect('lib')), HOSTILE.workflow, HOSTILE.version, HOSTILE.step);
    await library.close();
  });
});
