/**
 * Every command the CLI suggests, in every place it prints one (`continue with:`, `resume with:`,
 * the notes of `remit runs`, `remit inspect`, the advice of an error: an effect in flight, a torn
 * or missing log, a continue from before the head), pasted into bash as printed: no shell syntax
 * outside quotes (a placeholder such as `<module>` unquoted is a redirection), bash parses it, and
 * reads it as words starting with `remit` without running or redirecting anything. A placeholder
 * the CLI cannot fill in is quoted (`'<module>'`), and the pasted command says to fill it in; a
 * value it knows (the lease's remaining time for `--wait`) is printed.
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../core/index.js';
import type { SequencerHooks } from '../faults.js';
import { Remit } from '../remit.js';
import { SqliteStore } from '../store/sqlite.js';
import { cliInProcess, type CliOutcome } from '../../test-support/cli-in-process.js';
import { counter } from '../../test-support/counter-workflow.js';
import { mail } from '../../test-support/mail-workflow.js';

const REFUND_MODULE = fileURLToPath(new URL('../../../examples/refund/index.ts', import.meta.url));
const COUNTER_MODULE = fileURLToPath(new URL('../../test-support/counter-workflow.ts', import.meta.url));
const COUNTER_THROWING_MODULE = fileURLToPath(new URL('../../test-support/counter-throwing-workflow.ts', import.meta.url));
const MAIL_MODULE = fileURLToPath(new URL('../../test-support/mail-workflow.ts', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'remit-cli-suggestions-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const remit = cliInProcess(cwd);

/** Shell syntax outside quotes in `line` (POSIX '…' and "…", bash $'…', backslash escapes). */
function unquotedShellSyntax(line: string): string[] {
  const found: string[] = [];
  for (let i = 0; i < line.length; ) {
    const c = line[i]!;
    if (c === '\\') i += 2;
    else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return [...found, "unterminated '"];
      i = end + 1;
    } else if (c === '"' || (c === '$' && line[i + 1] === "'")) {
      const close = c === '"' ? '"' : "'";
      i += c === '"' ? 1 : 2;
      while (i < line.length && line[i] !== close) i += line[i] === '\\' ? 2 : 1;
      if (i >= line.length) return [...found, `unterminated ${close}`];
      i++;
    } else {
      if ('<>|&;()`'.includes(c)) found.push(c);
      i++;
    }
  }
  return found;
}

/**
 * The commands suggested in printed text: each one in backticks, and each other one from `remit `
 * to the end of its line or to the `; ` that separates the notes of a `runs` row.
 */
function suggestedCommands(text: string): string[] {
  const found = [...text.matchAll(/`(remit [^`]*)`/g)].map((match) => match[1]!);
  for (const line of text.split('\n')) {
    for (const match of line.replace(/`[^`]*`/g, '').matchAll(/(?:^|\s)(remit .*?)(?=; |$)/g)) found.push(match[1]!.trimEnd());
  }
  return found;
}

/** What bash does with `line` pasted as it is: its words, in an empty folder that must stay empty. */
function pastedIntoBash(line: string): { words: string[]; stderr: string; created: string[] } {
  const folder = mkdtempSync(join(tmpdir(), 'remit-paste-'));
  try {
    const read = spawnSync('bash', ['-c', `set -C; printf '%s\\0' ${line}`], { cwd: folder, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
    return { words: read.stdout.split('\0').slice(0, -1), stderr: read.stderr, created: readdirSync(folder) };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

function expectPastes(command: string): string[] {
  expect(unquotedShellSyntax(command), command).toEqual([]);
  expect(spawnSync('bash', ['-n', '-c', command]).status, command).toBe(0);
  const pasted = pastedIntoBash(command);
  expect(pasted.stderr, command).toBe('');
  expect(pasted.created, command).toEqual([]);
  expect(pasted.words[0], command).toBe('remit');
  return pasted.words.slice(1);
}

describe('unquotedShellSyntax', () => {
  it('finds a redirection, a pipe or a separator outside quotes, and nothing inside them', () => {
    expect(unquotedShellSyntax('remit --workflow <module> continue x')).toEqual(['<', '>']);
    expect(unquotedShellSyntax('remit continue --wait <ms> c1')).toEqual(['<', '>']);
    expect(unquotedShellSyntax("remit --workflow '<module>' continue 'a; b' $'c\\'|d' \"e&f\" g\\;h")).toEqual([]);
    expect(unquotedShellSyntax('remit x; rm y | z & w')).toEqual([';', '|', '&']);
  });
});

describe('every suggested command the CLI prints', () => {
  it('pastes into bash as printed: no shell syntax outside quotes, nothing run or redirected', async () => {
    mkdirSync(join(cwd, 'a b'), { recursive: true });
    const db = join(cwd, 'a b', 'ops.db');
    const printed: CliOutcome[] = [];
    const cli = async (...args: string[]) => {
      const out = await remit('--db', db, ...args);
      printed.push(out);
      return out;
    };

    // A parked run (resume with:), a completed one, and a fork nobody continued (continue with:, a
    // placeholder for the module: `fork` loads none), shown by `runs` and `inspect`.
    expect((await cli('--workflow', REFUND_MODULE, 'run', '--run-id', 'r1')).stdout).toMatch(/resume with: remit /);
    expect((await cli('--workflow', COUNTER_MODULE, 'run', '--run-id', 'c1')).code).toBe(0);
    const fork = await cli('fork', 'c1', '0', '--run-id', 'f1');
    expect(fork.stdout).toContain(`continue with: remit '--db=${db}' --workflow '<module>' continue f1`);
    expect((await cli('inspect', 'f1')).stdout).toMatch(/fork, not continued: .*remit /);
    // Continuing from before the head: at a checkpoint, the fork command; elsewhere, where to find one.
    const back = await cli('--workflow', COUNTER_MODULE, 'continue', 'c1', '--from', '0');
    expect(back.code).toBe(4);
    expect(back.stderr.split('\n')[1]).toBe(`  fork it there: \`remit '--db=${db}' --workflow=${COUNTER_MODULE} fork c1 0\` makes a new run from that checkpoint (the run itself is left as it is) and prints the command that continues it`);
    const records = (await remit('--db', db, '--json', 'inspect', 'r1')).json().records as { seq: number; kind: string }[];
    const notCheckpoint = records.find((r) => r.kind !== 'RUN_STARTED' && r.kind !== 'NODE_COMPLETED')!.seq;
    const between = await cli('--workflow', REFUND_MODULE, 'continue', 'r1', '--from', String(notCheckpoint));
    expect(between.code).toBe(4);
    expect(between.stderr.split('\n')[1]).toBe(`  find a checkpoint before the head: \`remit '--db=${db}' inspect r1\` lists the records (RUN_STARTED and NODE_COMPLETED are checkpoints)`);
    // `fork --continue` failing after the fork was written (node code that throws).
    expect((await cli('--workflow', COUNTER_THROWING_MODULE, 'fork', 'c1', '1', '--run-id', 'f2', '--continue')).stderr).toMatch(/continue with: remit /);

    // A running run whose process crashed with an effect attempt in flight: the in-flight advice
    // (--wait with the lease's remaining time, --instance-id), and the running run's note in `runs`.
    const stop: SequencerHooks = { at(point, info) { if (point === 'append.after' && info.kinds?.includes('EFFECT_ATTEMPT')) throw new Error('crash'); } };
    const crashed = new Remit(new SqliteStore(db), await createCore('reference'), [mail], stop, {}, { instanceId: 'replica-a', effectLeaseMs: 60_000 });
    await expect(crashed.start(mail, {}, { runId: 'm1' })).rejects.toThrow('crash');
    await crashed.close();
    const inFlight = await cli('--workflow', MAIL_MODULE, 'continue', 'm1');
    expect(inFlight.code).toBe(4);
    expect(inFlight.stderr).toMatch(/--wait \d+ m1` waits up to \d+ ms, until its lease runs out/);

    // A torn run (the error's advice, the listing, repair's continue with:) and a run listed without records.
    const store = new SqliteStore(db);
    await new Remit(store, await createCore('reference'), [counter]).start(counter, { i: 0 }, { runId: 'ghost' });
    await store.close();
    expect((await cli('--workflow', REFUND_MODULE, 'run', '--run-id', 't1')).code).toBe(0);
    const raw = new Database(db);
    raw.prepare('UPDATE remit_records SET bytes = substr(bytes, 1, 20) WHERE run_id = ? AND seq = (SELECT max(seq) FROM remit_records WHERE run_id = ?)').run('t1', 't1');
    raw.prepare('DELETE FROM remit_records WHERE run_id = ?').run('ghost');
    raw.prepare('DELETE FROM remit_summaries WHERE run_id = ?').run('ghost');
    raw.close();
    expect((await cli('--workflow', REFUND_MODULE, 'continue', 't1')).stderr).toMatch(/REMIT_LOG_TORN/);
    const listed = await cli('runs');
    expect(listed.stdout).toMatch(/^m1 .* if no process is driving it \(after a crash\): remit '--db=[^']*' --workflow '<module>' continue m1$/m);
    expect(listed.stdout).toMatch(/^ghost .*NO_RECORDS/m);
    expect((await cli('scrub', 'ghost')).stdout).toMatch(/`remit '--db=[^']*' --workflow '<module>' run --run-id=ghost`/);
    expect((await cli('repair', 't1')).stdout).toMatch(/continue with: remit /);

    const commands = printed.flatMap((out) => [...suggestedCommands(out.stdout), ...suggestedCommands(out.stderr)]);
    const pasted = commands.map(expectPastes);
    // Each kind of suggestion was seen (the extraction found them).
    const subcommands = new Set(pasted.map((words) => words.find((word) => ['run', 'resume', 'continue', 'fork', 'inspect', 'repair'].includes(word))));
    expect([...subcommands].sort()).toEqual(['continue', 'fork', 'inspect', 'repair', 'resume', 'run']);
    expect(commands.filter((command) => command.includes("--workflow '<module>'")).length).toBeGreaterThanOrEqual(4);
    expect(commands.some((command) => /--wait \d+ m1$/.test(command))).toBe(true);

    // Pasted as printed, a placeholder is refused, saying what to fill in; a known value works.
    const placeholder = await remit(...expectPastes(/continue with: (remit .*)$/m.exec(fork.stdout)![1]!));
    expect(placeholder.code).toBe(2);
    expect(placeholder.stderr).toBe('remit: usage: --workflow <module>: a placeholder in a suggested command: replace it with the path of your workflow module (docs/guide.md, "The CLI")\n');
    const forked = await remit(...expectPastes(/`(remit [^`]* fork c1 0)`/.exec(back.stderr)![1]!));
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stdout).toMatch(/^forked c1 at seq 0 into c1\.fork-/);
  });
});
