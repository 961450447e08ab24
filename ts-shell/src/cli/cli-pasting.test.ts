/**
 * A suggested command pasted as printed reaches what it names (docs/guide.md, "The CLI"), whatever
 * the run id, interrupt id, instance id or path holds: a bidi control (U+202E), a C0 control (in a
 * node name or a path), quotes, spaces, `$`, a backslash, a backslash before `u{`. Human output
 * escapes such characters (display.ts), so a word holding one is printed in ANSI-C quoting,
 * `$'…'`, its characters as `\xHH` UTF-8 bytes, which bash reads back as the text exactly (in any
 * locale); other words keep POSIX single quotes. Pasting is done by bash itself here.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../core/index.js';
import { displayText } from '../display.js';
import { setSuggestedCommandOptions, shellWord, suggestCommand } from '../errors.js';
import type { SequencerHooks } from '../faults.js';
import { runIdProblem } from '../ids.js';
import { Remit } from '../remit.js';
import { SqliteStore } from '../store/sqlite.js';
import { cliInProcess } from '../../test-support/cli-in-process.js';
import { HOSTILE } from '../../test-support/control-names-workflow.js';
import { mail } from '../../test-support/mail-workflow.js';
import { inFlightAdvice } from './main.js';

const HOSTILE_MODULE = fileURLToPath(new URL('../../test-support/control-names-workflow.ts', import.meta.url));
const MAIL_MODULE = fileURLToPath(new URL('../../test-support/mail-workflow.ts', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'remit-cli-pasting-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const remit = cliInProcess(cwd);

/** The words bash reads from `line`, pasted as it is (in the C locale: the words hold bytes, not locale escapes). */
function bashWords(line: string): string[] {
  const read = spawnSync('bash', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
  expect(read.stderr, line).toBe('');
  return read.stdout.split('\0').slice(0, -1);
}

/** A suggested command found in printed output: bash's words after its leading `remit`. */
function pasted(line: string): string[] {
  // Printed as shown (display.ts): no character human output escapes is printed raw.
  expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u);
  const words = bashWords(line);
  expect(words[0]).toBe('remit');
  return words.slice(1);
}

/** Characters that make quoting hard: bidi controls, C0 and C1 controls, separators, shell syntax, `\u{`. */
const AWKWARD = [
  '\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069',
  '\u2028', '\u2029', '\u0085', '\u009b', '\u007f', '\u001b', '\n', '\r', '\t', '\u0007',
  "'", '"', ' ', '\\', '\\u{', 'u{', '}', '$', '$(', '`', '!', ';', '&', '*', '?', '-', '~', '#', '%', '=', 'é', '日本', '🙂', '\ufeff',
];
/** Any text a command line can carry (no NUL), built mostly from the awkward characters. */
const awkwardText = fc
  .oneof(
    fc.array(fc.oneof(fc.constantFrom(...AWKWARD), fc.string({ unit: 'binary', maxLength: 3 })), { maxLength: 10 }).map((parts) => parts.join('')),
    fc.string({ unit: 'binary', maxLength: 24 }),
  )
  .filter((text) => !text.includes('\0'));
/** A text that is a valid run id (docs/guide.md, "Limits": bidi controls yes, control characters no). */
const runIdText = fc
  .array(fc.constantFrom(...AWKWARD.filter((c) => runIdProblem(`x${c}`) === null), 'a', 'r1', 'run-7'), { minLength: 1, maxLength: 10 })
  .map((parts) => parts.join(''))
  .filter((id) => runIdProblem(id) === null);

describe('shellWord', () => {
  it('property: bash reads every word back as exactly its text, and human output prints the word as it is', () => {
    fc.assert(
      fc.property(awkwardText, (text) => {
        const word = shellWord(text);
        expect(bashWords(`${word} end`)).toEqual([text, 'end']);
        expect(displayText(word)).toBe(word);
      }),
      { numRuns: 150 },
    );
  });

  it('keeps plain words and POSIX single quotes for text without escaped characters; ANSI-C quoting only for the others', () => {
    expect(shellWord('run-7')).toBe('run-7');
    expect(shellWord("it's; rm -rf x")).toBe(`'it'\\''s; rm -rf x'`);
    expect(shellWord('r1\u202e')).toBe(`$'r1\\xe2\\x80\\xae'`);
    expect(shellWord('ask\u001b]0;t\u0007@2')).toBe(`$'ask\\x1b]0;t\\x07@2'`);
    expect(shellWord("a\\u{41}'b\\c\u200e")).toBe(`$'a\\x5cu{41}\\'b\\\\c\\xe2\\x80\\x8e'`);
    expect(shellWord('')).toBe("''");
  });

  it('property: a suggested command, printed as human output prints it, reads back as its words (the run id after `--` when it starts with "-")', () => {
    fc.assert(
      fc.property(runIdText, awkwardText, awkwardText, awkwardText, (runId, node, db, module) => {
        setSuggestedCommandOptions({ always: [shellWord(`--db=${db}`)], workflows: [shellWord(`--workflow=${module}`)] });
        try {
          const interruptId = `${node}@2`;
          const end = runId.startsWith('-') || interruptId.startsWith('-') ? ['--'] : [];
          expect(bashWords(displayText(suggestCommand('resume', runId, interruptId)))).toEqual(['remit', `--db=${db}`, `--workflow=${module}`, 'resume', ...end, runId, interruptId]);
          expect(bashWords(displayText(suggestCommand('inspect', runId)))).toEqual(['remit', `--db=${db}`, 'inspect', ...(runId.startsWith('-') ? ['--'] : []), runId]);
        } finally {
          setSuggestedCommandOptions();
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe('suggested commands the CLI prints, pasted into bash as printed', () => {
  // A folder whose name holds a newline, a bidi override and quotes: --db repeats it.
  const folder = join(cwd, "ops\u202e 'a'\nfolder");
  mkdirSync(folder, { recursive: true });
  const db = join(folder, 'db "1".db');
  const cli = (...args: string[]) => remit('--db', db, '--workflow', HOSTILE_MODULE, ...args);

  it('resume with, continue with, the repair of a torn record (advice and `runs`) reach the run they name', async () => {
    // Bidi controls, quotes, `$`, a backslash before u{; the interrupt id holds ESC and BEL (its node name).
    const runId = "r1\u202e $x 'q' \\u{41}";
    const started = await cli('run', '--run-id', runId);
    expect(started.code, started.stderr).toBe(0);
    const resumeWith = /resume with: (remit .*) '<json value>'$/m.exec(started.stdout)![1]!;
    const words = pasted(resumeWith);
    expect(words).toEqual(['--db=' + db, '--workflow=' + HOSTILE_MODULE, 'resume', runId, `${HOSTILE.ask}@2`]);
    const resumed = await remit(...words, '{"ok":true}');
    // The run was reached: it goes on to its fail() (exit 10), not "no such run" (exit 3).
    expect(resumed.code, resumed.stderr).toBe(10);
    expect(resumed.stdout.split('\n')[0]).toContain(`run ${displayText(runId)} (${displayText(HOSTILE.workflow)}): failed, head seq `);

    const forkId = '-fork\u2067';
    const forked = await cli('fork', runId, '1', '--run-id', forkId);
    expect(forked.code, forked.stderr).toBe(0);
    const continueWith = pasted(/continue with: (remit .*)$/m.exec(forked.stdout)![1]!);
    expect(continueWith.slice(-2)).toEqual(['--', forkId]);
    const continued = await remit(...continueWith);
    expect(continued.code, continued.stderr).toBe(0);
    expect(continued.stdout).toMatch(/^run -fork\\u\{2067\} \(.*\): parked/);

    // A torn last record: the error's advice and the listing suggest the repair.
    const raw = new Database(db);
    raw.prepare('UPDATE remit_records SET bytes = substr(bytes, 1, 20) WHERE run_id = ? AND seq = (SELECT max(seq) FROM remit_records WHERE run_id = ?)').run(forkId, forkId);
    raw.close();
    const refused = await cli('continue', '--', forkId);
    expect(refused.stderr).toMatch(/REMIT_LOG_TORN/);
    const advised = /`(remit [^`]* repair [^`]*)`/.exec(refused.stderr)![1]!;
    const listed = await cli('runs');
    expect(/TORN at seq \d+: (remit .* repair .*)$/m.exec(listed.stdout)![1]).toBe(advised);
    const repaired = await remit(...pasted(advised));
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.stdout).toMatch(/removed/);
    expect((await cli('continue', '--', forkId)).code).toBe(0);
  });

  it('an effect attempt in flight: the --wait and --instance-id commands reach the run and the owner they name', async () => {
    const mailDb = join(folder, 'mail.db');
    const runId = 'm\u202e1';
    const owner = 'replica\u2066a';
    const stop: SequencerHooks = { at(point, info) { if (point === 'append.after' && info.kinds?.includes('EFFECT_ATTEMPT')) throw new Error('crash'); } };
    const crashed = new Remit(new SqliteStore(mailDb), await createCore('reference'), [mail], stop, {}, { instanceId: owner, effectLeaseMs: 60_000 });
    await expect(crashed.start(mail, {}, { runId })).rejects.toThrow('crash');
    await crashed.close();

    const refused = await remit('--db', mailDb, '--workflow', MAIL_MODULE, '--instance-id', 'replica-b', 'continue', runId);
    expect(refused.code).toBe(4);
    const hint = refused.stderr.split('\n')[1]!;
    const wait = pasted(/`(remit [^`]*--wait \d+[^`]*)`/.exec(hint)![1]!.replace(/--wait \d+/, '--wait 30'));
    expect(wait.slice(-4)).toEqual(['continue', '--wait', '30', runId]);
    expect((await remit(...wait)).stderr).toMatch(/REMIT_EFFECT_IN_FLIGHT/);
    const takeOver = pasted(/`(remit [^`]*--instance-id[^`]*)`/.exec(hint)![1]!);
    expect(takeOver.slice(-3)).toEqual(['continue', `--instance-id=${owner}`, runId]);
    const taken = await remit(...takeOver);
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stdout).toMatch(/^run m\\u\{202e\}1 \(mail\): completed/);
  });

  it('inFlightAdvice: a run id starting with "-" goes after `--`, quoted as the others', () => {
    // As main.ts prints it: through displayText.
    const advice = displayText(inFlightAdvice({ runId: '-m\u202e', owner: "o'\u200f", retryAfterMs: 5 } as never));
    const takeOver = /`(remit [^`]*--instance-id[^`]*)`/.exec(advice)![1]!;
    expect(pasted(takeOver)).toEqual(['continue', "--instance-id=o'\u200f", '--', '-m\u202e']);
  });
});
