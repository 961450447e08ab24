/**
 * What the `remit` command says when it refuses or fails, and that what it says is true and can be
 * acted on: `fork --continue` under a module without the source's definition (refused, nothing
 * written) or failing after the fork was written (the message says so and how to go on),
 * commander's own refusals in REMIT's one-line form (nothing on stderr under --json), an effect
 * attempt in flight (how to wait for it or take it over), counts and the help of `continue --from`.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../core/index.js';
import { EffectInFlightError } from '../errors.js';
import type { SequencerHooks } from '../faults.js';
import { Remit } from '../remit.js';
import { SqliteStore } from '../store/sqlite.js';
import { cliInProcess } from '../../test-support/cli-in-process.js';
import { inFlightAdvice } from './main.js';
import { mail } from '../../test-support/mail-workflow.js';

const COUNTER_MODULE = fileURLToPath(new URL('../../test-support/counter-workflow.ts', import.meta.url));
const COUNTER_V2_MODULE = fileURLToPath(new URL('../../test-support/counter-v2-workflow.ts', import.meta.url));
const COUNTER_THROWING_MODULE = fileURLToPath(new URL('../../test-support/counter-throwing-workflow.ts', import.meta.url));
const MAIL_MODULE = fileURLToPath(new URL('../../test-support/mail-workflow.ts', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'remit-cli-advice-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const remit = cliInProcess(cwd);

/** The words sh reads from a command line REMIT suggests, after its leading `remit`. */
function wordsOf(line: string): string[] {
  const words = spawnSync('sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' }).stdout.split('\0').slice(0, -1);
  expect(words[0]).toBe('remit');
  return words.slice(1);
}

describe('fork --continue', () => {
  it('under a module without the source run\'s workflow: refused with REMIT_UNKNOWN_WORKFLOW, and no fork is written', async () => {
    const db = join(cwd, 'fork-unknown.db');
    expect((await remit('--db', db, '--workflow', COUNTER_MODULE, 'run', '--run-id', 'src')).code).toBe(0);
    const refused = await remit('--db', db, '--workflow', MAIL_MODULE, 'fork', 'src', '1', '--run-id', 'f1', '--continue');
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/^remit: REMIT_UNKNOWN_WORKFLOW: no workflow named "counter" is registered \(known: mail\)/);
    expect(refused.stderr).toMatch(/no fork was created/);
    expect(refused.stdout).toBe('');
    const json = await remit('--db', db, '--workflow', MAIL_MODULE, '--json', 'fork', 'src', '1', '--run-id', 'f1', '--continue');
    expect(json.code).toBe(6);
    expect(json.json()).toMatchObject({ error: { code: 'REMIT_UNKNOWN_WORKFLOW', workflow: 'counter', known: ['mail'], runId: 'src' }, exitCode: 6 });
    // Nothing was written: the fork's id is free, and the same fork under the right module works.
    expect((await remit('--db', db, 'inspect', 'f1')).code).toBe(3);
    const retried = await remit('--db', db, '--workflow', COUNTER_MODULE, 'fork', 'src', '1', '--run-id', 'f1', '--continue');
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toMatch(/^forked src at seq 1 into f1\nrun f1 \(counter\): completed/);
  });

  it('under a module with another definition of the source run\'s workflow: refused with REMIT_DEFINITION_MISMATCH, and no fork is written', async () => {
    const db = join(cwd, 'fork-mismatch.db');
    expect((await remit('--db', db, '--workflow', COUNTER_MODULE, 'run', '--run-id', 'src')).code).toBe(0);
    // The module registers "counter", changed: the fork could not be continued under it either.
    const refused = await remit('--db', db, '--workflow', COUNTER_V2_MODULE, 'fork', 'src', '1', '--run-id', 'f2', '--continue');
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/^remit: REMIT_DEFINITION_MISMATCH: run was started under a different definition of workflow counter: version changed from 1 to 2/);
    expect(refused.stderr).toMatch(/no fork was created/);
    expect(refused.stderr).not.toMatch(/continue with:/);
    const json = await remit('--db', db, '--workflow', COUNTER_V2_MODULE, '--json', 'fork', 'src', '1', '--run-id', 'f2', '--continue');
    expect(json.json()).toMatchObject({ error: { code: 'REMIT_DEFINITION_MISMATCH', workflow: 'counter', runId: 'src' }, exitCode: 6 });
    expect(json.json()).not.toHaveProperty('forked');
    expect((await remit('--db', db, 'inspect', 'f2')).code).toBe(3);
    const retried = await remit('--db', db, '--workflow', COUNTER_MODULE, 'fork', 'src', '1', '--run-id', 'f2', '--continue');
    expect(retried.code, retried.stderr).toBe(0);
  });

  it('failing after the fork was written: the message says the fork was created and how to continue it', async () => {
    const db = join(cwd, 'fork-failing.db');
    expect((await remit('--db', db, '--workflow', COUNTER_MODULE, 'run', '--run-id', 'src')).code).toBe(0);
    // The module registers "counter" as it was started (same definition), but its node code
    // throws: the fork is written, then continuing it fails.
    const failed = await remit('--db', db, '--workflow', COUNTER_THROWING_MODULE, 'fork', 'src', '1', '--run-id', 'f2', '--continue');
    expect(failed.code).toBe(9);
    expect(failed.stderr).toMatch(/^remit: REMIT_HANDLER_THREW: node code threw: .*tick is broken/);
    expect(failed.stderr).toContain('the fork f2 of src at seq 1 was created');
    // From a review of forks: it said "but not driven on", where continuing it may have recorded steps that recoverAll then drives on.
    expect(failed.stderr).toMatch(/was created, and continuing it stopped at this error \(what it recorded before is kept, and remit .*inspect f2 shows it; a fork that recorded more than its FORKED record is a running run, which recoverAll drives on\)/);
    expect(failed.stderr).not.toContain('not driven on');
    const line = /continue with: (remit [^\n]*?) *$/m.exec(failed.stderr)?.[1];
    expect(line).toBe(`remit --db=${db} --workflow=${COUNTER_THROWING_MODULE} continue f2`);
    const json = await remit('--db', db, '--workflow', COUNTER_THROWING_MODULE, '--json', 'fork', 'src', '1', '--run-id', 'f3', '--continue');
    expect(json.json()).toMatchObject({ error: { code: 'REMIT_HANDLER_THREW', message: expect.stringContaining('the fork f3 of src at seq 1 was created') }, forked: { runId: 'f3', sourceRunId: 'src', checkpointSeq: 1 }, exitCode: 9 });
    // The fork is there; continued under the module whose node code works, it completes.
    const continued = await remit('--db', db, '--workflow', COUNTER_MODULE, 'continue', 'f2');
    expect(continued.code, continued.stderr).toBe(0);
    expect(continued.stdout).toMatch(/^run f2 \(counter\): completed/);
  });
});

describe('a fork the store or the log refuses', () => {
  it('at a record that is not a checkpoint: the record\'s kind named, and the advice lists the checkpoints', async () => {
    const db = join(cwd, 'fork-not-checkpoint.db');
    const run = await remit('--db', db, '--workflow', COUNTER_MODULE, '--json', 'run', '--run-id', 'src');
    const head = (run.json() as { headSeq: number }).headSeq; // RUN_COMPLETED
    const refused = await remit('--db', db, 'fork', 'src', String(head));
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/REMIT_NOT_A_CHECKPOINT: the record at this seq \(RUN_COMPLETED\) is not a checkpoint/);
    const advice = refused.stderr.split('\n')[1]!;
    expect(advice).toMatch(/^ {2}find a checkpoint: `remit .*inspect src` lists the records/);
    expect(wordsOf(advice.slice(advice.indexOf('`') + 1, advice.lastIndexOf('`')))).toEqual([`--db=${db}`, 'inspect', 'src']);
    const json = await remit('--db', db, '--json', 'fork', 'src', String(head));
    expect(json.json()).toMatchObject({ error: { code: 'REMIT_NOT_A_CHECKPOINT', runId: 'src', seq: head, recordKind: 'RUN_COMPLETED' } });
  });

  it('into an id that is taken: the advice says to name another, and how to see the run that has it', async () => {
    const db = join(cwd, 'fork-taken.db');
    expect((await remit('--db', db, '--workflow', COUNTER_MODULE, 'run', '--run-id', 'src')).code).toBe(0);
    expect((await remit('--db', db, '--workflow', COUNTER_MODULE, 'run', '--run-id', 'taken')).code).toBe(0);
    const refused = await remit('--db', db, 'fork', 'src', '1', '--run-id', 'taken');
    expect(refused.code).toBe(4);
    const [line, advice] = refused.stderr.split('\n');
    expect(line).toMatch(/REMIT_FORK_TARGET_EXISTS: cannot fork into taken/);
    expect(advice).toMatch(/^ {2}name another new run with --run-id, or leave it out for a fresh id; `remit .*inspect taken` shows the run that has this one$/);
  });

  it('a --run-id that is not a run id names the source run too (--json runId)', async () => {
    const db = join(cwd, 'fork-bad-id.db');
    expect((await remit('--db', db, '--workflow', COUNTER_MODULE, 'run', '--run-id', 'src')).code).toBe(0);
    const refused = await remit('--db', db, '--json', 'fork', 'src', '1', '--run-id', '   ');
    expect(refused.json()).toMatchObject({ error: { code: 'REMIT_RUN_ID_INVALID', field: '--run-id', runId: 'src', problem: expect.stringMatching(/no visible character/) } });
  });
});

describe("commander's own refusals", () => {
  it('print `remit: usage: <message>` and the help hint on stderr', async () => {
    const unknown = await remit('bogus');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe("remit: usage: unknown command 'bogus'\n(add --help for usage)\n");
    const extra = await remit('inspect', 'a', 'b');
    expect(extra.code).toBe(2);
    expect(extra.stderr).toBe("remit: usage: too many arguments for 'inspect'. Expected 1 argument but got 2.\n(add --help for usage)\n");
    const missing = await remit('inspect');
    expect(missing.stderr).toBe("remit: usage: missing required argument 'runId'\n(add --help for usage)\n");
    // A suggestion stays on the message's line.
    const misspelt = await remit('runz');
    expect(misspelt.stderr).toBe("remit: usage: unknown command 'runz' (Did you mean one of run, runs?)\n(add --help for usage)\n");
  });

  it('under --json print nothing on stderr: the JSON on stdout carries the message', async () => {
    for (const args of [['bogus'], ['inspect', 'a', 'b'], ['inspect'], ['runs', '--frob']]) {
      const out = await remit('--json', ...args);
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stderr, args.join(' ')).toBe('');
      expect(out.json(), args.join(' ')).toEqual({ error: { name: 'UsageError', code: 'CLI_USAGE', message: expect.not.stringMatching(/^error: |add --help/) }, exitCode: 2 });
    }
    expect((await remit('--json', 'bogus')).json().error.message).toBe("unknown command 'bogus'");
  });
});

describe('an effect attempt in flight', () => {
  it('the --wait printed is the lease\'s remaining time: retryAfterMs, or, when a call in this process runs the attempt, the lease (retryAfterMs is a poll interval then)', () => {
    const leaseUntil = Date.now() + 40_000;
    const elsewhere = inFlightAdvice(new EffectInFlightError('m1', 2, 'send', 'm1/send/1', 1, 'replica-a', leaseUntil, 39_500));
    expect(elsewhere).toMatch(/^ {2}wait for it: `remit .*continue --wait 39500 m1` waits up to 39500 ms, until its lease runs out; or, if its owner replica-a crashed/);
    const here = inFlightAdvice(new EffectInFlightError('m1', 2, 'send', 'm1/send/1', 1, 'replica-a', leaseUntil, 50, true));
    const waitMs = Number(/--wait (\d+)/.exec(here)![1]);
    expect(waitMs).toBeGreaterThan(35_000);
    expect(waitMs).toBeLessThanOrEqual(40_000);
    expect(here).toMatch(/^ {2}a call in this process was running it \(retryAfterMs 50 is a poll interval, not the lease's remaining time\); wait for it: `remit .*continue --wait \d+ m1` waits up to \d+ ms, until its lease runs out/);
  });

  it("a worker thread's attempt is only waited for: its owner (<id>#thread-N) is an instance id the CLI refuses, so it is not offered", () => {
    const advice = inFlightAdvice(new EffectInFlightError('w1', 2, 'send', 'w1/send/1', 1, 'pod-1#thread-2', Date.now() + 20_000, 19_000));
    expect(advice).toMatch(/^ {2}wait for it: `remit .*continue --wait 19000 w1` waits up to 19000 ms, until its lease runs out; its owner pod-1#thread-2 is a worker thread's or cluster worker's instance, whose id cannot be reused from here$/);
    expect(advice).not.toContain('--instance-id');
  });

  it('the error says how to wait for it (--wait) and how to take it over (--instance-id), and both commands work as printed', async () => {
    const db = join(cwd, 'in-flight.db');
    // replica-a claims attempt 1 and stops (a crash) before its handler runs.
    const stop: SequencerHooks = { at(point, info) { if (point === 'append.after' && info.kinds?.includes('EFFECT_ATTEMPT')) throw new Error('crash'); } };
    // A 10 minute lease, the wait printed checked to be over 9 minutes: a 60 s lease checked to have
    // over 50 s left gave the CLI only 10 s to load the module and answer on a loaded machine.
    const crashed = new Remit(new SqliteStore(db), await createCore('reference'), [mail], stop, {}, { instanceId: 'replica-a', effectLeaseMs: 600_000 });
    await expect(crashed.start(mail, {}, { runId: 'm1' })).rejects.toThrow('crash');
    await crashed.close();

    const refused = await remit('--db', db, '--workflow', MAIL_MODULE, '--instance-id', 'replica-b', 'continue', 'm1');
    expect(refused.code).toBe(4);
    const [first, hint, ...rest] = refused.stderr.split('\n');
    expect(first).toMatch(/^remit: REMIT_EFFECT_IN_FLIGHT: attempt 1 of effect m1\/send\/1 is in flight \(owner replica-a/);
    expect(rest).toEqual(['']);
    expect(hint).toMatch(/--instance-id=replica-a/);
    // The wait printed is the one the error knows: the lease's remaining time (under 10 min), not a placeholder.
    const wait = /`(remit [^`]*--wait \d+[^`]*)`/.exec(hint!)![1]!;
    const waitMs = Number(/--wait (\d+)/.exec(wait)![1]);
    expect(waitMs).toBeGreaterThan(540_000);
    expect(waitMs).toBeLessThanOrEqual(600_000);
    expect(wait).toBe(`remit --db=${db} --workflow=${MAIL_MODULE} continue --wait ${waitMs} m1`);
    expect(hint).toContain(`waits up to ${waitMs} ms, until its lease runs out`);
    const takeOver = /`(remit [^`]*--instance-id[^`]*)`/.exec(hint!)![1]!;
    expect(takeOver).toBe(`remit --db=${db} --workflow=${MAIL_MODULE} continue --instance-id=replica-a m1`);

    // --wait is a real option of continue (a short wait ends in the same refusal, exit 4).
    const waited = await remit(...wordsOf(wait.replace(`--wait ${waitMs}`, '--wait 30')));
    expect(waited.code).toBe(4);
    expect(waited.stderr).toMatch(/REMIT_EFFECT_IN_FLIGHT/);
    // Under --json, nothing on stderr: the error's fields say the same.
    const json = await remit('--db', db, '--workflow', MAIL_MODULE, '--instance-id', 'replica-b', '--json', 'continue', 'm1');
    expect(json.stderr).toBe('');
    expect(json.json()).toMatchObject({ error: { code: 'REMIT_EFFECT_IN_FLIGHT', owner: 'replica-a', runId: 'm1' }, exitCode: 4 });
    // The crashed process's instance id takes its attempt over at once.
    const taken = await remit(...wordsOf(takeOver));
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stdout).toMatch(/^run m1 \(mail\): completed/);
  });
});

describe('wording', () => {
  it('scrub --all counts runs and records in the singular for one', async () => {
    const db = join(cwd, 'one-run.db');
    expect((await remit('--db', db, '--workflow', COUNTER_MODULE, 'run', '--run-id', 'only')).code).toBe(0);
    const scrubbed = await remit('--db', db, 'scrub', '--all');
    expect(scrubbed.code, scrubbed.stderr).toBe(0);
    expect(scrubbed.stdout).toMatch(/^scrubbed 1 run in .*: no problems$/m);
    expect(scrubbed.stdout).not.toMatch(/\b1 runs\b/);
  });

  it('continue --from: the help says what is accepted (the seq of the last record, any kind), and a completed run\'s head is', async () => {
    const help = await remit('continue', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).not.toMatch(/head checkpoint/);
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/--from <seq> +refuse unless <seq> is the run's head, the seq of its last record \(of any kind/);
    const db = join(cwd, 'from.db');
    const run = await remit('--db', db, '--workflow', COUNTER_MODULE, '--json', 'run', '--run-id', 'done');
    const head = run.json().headSeq as number;
    const continued = await remit('--db', db, '--workflow', COUNTER_MODULE, '--json', 'inspect', 'done');
    expect(continued.json().records.at(-1).kind).toBe('RUN_COMPLETED');
    const fromHead = await remit('--db', db, '--workflow', COUNTER_MODULE, 'continue', 'done', '--from', String(head));
    expect(fromHead.code, fromHead.stderr).toBe(0);
    const fromEarlier = await remit('--db', db, '--workflow', COUNTER_MODULE, '--json', 'continue', 'done', '--from', String(head - 1));
    expect(fromEarlier.json()).toMatchObject({ error: { code: 'REMIT_IMPLICIT_FORK' }, exitCode: 4 });
  });
});

describe('a run the store cannot read', () => {
  it('`runs` says what to do about it, not to inspect it (inspect cannot read it either: it failed with a StoreError)', async () => {
    const db = join(cwd, 'not-bytes.db');
    expect((await remit('--db', db, '--workflow', COUNTER_MODULE, 'run', '--run-id', 'txt')).code).toBe(0);
    const { default: Database } = await import('better-sqlite3');
    const raw = new Database(db);
    raw.prepare('UPDATE remit_records SET bytes = CAST(bytes AS TEXT) WHERE run_id = ? AND seq = 1').run('txt');
    raw.close();
    const listed = await remit('--db', db, 'runs');
    expect(listed.stdout).toMatch(/RECORD_NOT_BYTES at seq 1: the run cannot be read, so it cannot be inspected or repaired here: restore the store from a backup/);
    expect(listed.stdout).not.toMatch(/see remit .*inspect txt/);
    expect((await remit('--db', db, 'inspect', 'txt')).code).toBe(8);
  });
});
