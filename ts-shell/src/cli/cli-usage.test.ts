/**
 * Command lines and inputs the `remit` command cannot use, and that it says so as it says
 * everything else: no command at all (a usage error like the others, with or without --json), an
 * option whose value is missing because another option follows it (`--run-id --json`), a workflow
 * module exporting something that is not a workflow (a builder, an object for the array: refused
 * naming the entry, never dropped), `--db` naming a folder, `run --name` naming no workflow of the
 * module (REMIT_UNKNOWN_WORKFLOW, exit 6 as documented), and `fork --continue` failing after the
 * fork was written (`forked` beside the error under --json).
 */

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cliInProcess } from '../../test-support/cli-in-process.js';

const COUNTER_MODULE = fileURLToPath(new URL('../../test-support/counter-workflow.ts', import.meta.url));
const COUNTER_THROWING_MODULE = fileURLToPath(new URL('../../test-support/counter-throwing-workflow.ts', import.meta.url));
const COUNTER = pathToFileURL(COUNTER_MODULE).href;
const WORKFLOW = pathToFileURL(fileURLToPath(new URL('../workflow/workflow.ts', import.meta.url))).href;
const cwd = mkdtempSync(join(tmpdir(), 'remit-cli-usage-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const remit = cliInProcess(cwd);

const COMMANDS = 'run, resume, continue, fork, inspect, runs, repair, scrub';

describe('no command', () => {
  it('is a usage error like the others: one line and the hint on stderr, exit 2; under --json a message, not "(outputHelp)"', async () => {
    for (const args of [[], ['--db', 'x.db'], ['--db=x.db', '--core', 'reference'], ['--']]) {
      const out = await remit(...args);
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stdout, args.join(' ')).toBe('');
      expect(out.stderr, args.join(' ')).toBe(`remit: usage: no command given; commands: ${COMMANDS}\n(add --help for usage)\n`);
    }
    for (const args of [['--json'], ['--json', '--db', 'x.db'], ['--db', 'x.db', '--json']]) {
      const out = await remit(...args);
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stderr, args.join(' ')).toBe('');
      expect(out.json(), args.join(' ')).toEqual({ error: { name: 'UsageError', code: 'CLI_USAGE', message: `no command given; commands: ${COMMANDS}` }, exitCode: 2 });
    }
    // `help` for a command that does not exist says which, like an unknown command.
    const help = await remit('--json', 'help', 'bogus');
    expect(help.json()).toEqual({ error: { name: 'UsageError', code: 'CLI_USAGE', message: `unknown command 'bogus' (help takes a command: ${COMMANDS})` }, exitCode: 2 });
    // Help and version still print, exit 0.
    expect((await remit('--db', 'x.db', '--help')).code).toBe(0);
    expect((await remit('help', 'run')).stdout).toMatch(/^Usage: remit run/);
    expect((await remit('--version')).code).toBe(0);
    expect(existsSync(join(cwd, 'x.db'))).toBe(false);
  });
});

describe('an option whose value is another option', () => {
  it('is a missing value (exit 2) wherever it is, a global option or a command\'s; --json is the flag, never a value', async () => {
    const db = join(cwd, 'values.db');
    const cases: Array<[string[], string, string]> = [
      [['--workflow', COUNTER_MODULE, 'run', '--run-id', '--json'], "-r, --run-id <id>", '--json'],
      [['--db', '--json', 'runs'], '--db <path>', '--json'],
      [['--workflow', COUNTER_MODULE, 'run', '-r', '--help'], '-r, --run-id <id>', '--help'],
      [['--workflow', COUNTER_MODULE, 'fork', 'x', '0', '--run-id', '--continue'], '-r, --run-id <id>', '--continue'],
      [['--workflow', COUNTER_MODULE, 'fork', 'x', '0', '--intent', '--db=other.db'], '--intent <text>', '--db=other.db'],
      [['--instance-id', '--json', 'runs'], '--instance-id <id>', '--json'],
    ];
    for (const [args, flags, next] of cases) {
      const message = `option '${flags}' argument missing: the next word, ${next}, is an option (to give it as the value, write ${flags.replace(/^-\w, /, '').replace(/ <.*/, '')}=${next})`;
      const json = await remit('--db', db, ...args);
      expect(json.code, args.join(' ')).toBe(2);
      if (args.includes('--json')) {
        expect(json.stderr, args.join(' ')).toBe('');
        expect(json.json(), args.join(' ')).toEqual({ error: { name: 'UsageError', code: 'CLI_USAGE', message }, exitCode: 2 });
      } else {
        expect(json.stdout, args.join(' ')).toBe('');
        expect(json.stderr, args.join(' ')).toBe(`remit: usage: ${message}\n(add --help for usage)\n`);
      }
    }
    // Nothing was created or run.
    expect(existsSync(db)).toBe(false);
    expect(existsSync(join(cwd, '--json'))).toBe(false);
    // A value that is an option's name is given in one word, as the message says.
    const named = await remit('--db', db, '--workflow', COUNTER_MODULE, '--json', 'run', '--run-id=--json');
    expect(named.code, named.stdout).toBe(0);
    expect(named.json()).toMatchObject({ runId: '--json', status: 'completed' });
  });
});

describe('a workflow module exporting what is not a workflow', () => {
  const moduleFile = (name: string, source: string) => {
    const path = join(cwd, name);
    writeFileSync(path, `import { counter } from '${COUNTER}';\nimport { END, workflow } from '${WORKFLOW}';\n${source}\n`);
    return path;
  };
  const builder = "workflow({ name: 'forgot', version: '1', state: counter.stateSchema }).pure('a', { run: (s) => s, next: END })";

  it('is refused naming the entry and what it is (a builder: call .build()), as createRemit refuses it; never dropped', async () => {
    const cases: Array<[string, string]> = [
      [`export const workflows = [counter, ${builder}];`, 'the export `workflows`, entry 1: a workflow builder, not a built workflow: call .build() on it'],
      ['export const workflows = { counter };', 'the export `workflows` is an object, not an array of workflows: export an array, e.g. [counter]'],
      ['export const workflows = [counter, undefined];', 'the export `workflows`, entry 1: undefined (is it imported and exported under that name?)'],
      ['export const workflows = [counter, "order"];', 'the export `workflows`, entry 1: a string, not a built workflow'],
      ['export const workflows = [];', 'the export `workflows` is an empty array: the module exports no workflow'],
      [`export default ${builder};`, 'the default export is a workflow builder, not a built workflow: call .build() on it'],
      [`export function createWorkflows() { return [${builder}.build(), { counter }]; }`, 'what createWorkflows() returned, entry 1: an object that is not a built workflow'],
      ['export const sampleInput = {};', 'the module exports no workflow (export createWorkflows(context), workflows, or a default workflow)'],
    ];
    for (const [index, [source, problem]] of cases.entries()) {
      const path = moduleFile(`exports-${index}.mjs`, source);
      const db = join(cwd, `exports-${index}.db`);
      const out = await remit('--db', db, '--workflow', path, 'run', '--name', 'forgot');
      expect(out.code, source).toBe(2);
      expect(out.stderr, source).toBe(`remit: usage: --workflow ${path}: ${problem}\n`);
      expect(existsSync(db)).toBe(false);
    }
    // Built, the same entries load.
    const built = moduleFile('exports-built.mjs', `export const workflows = [counter, ${builder}.build()];\nexport const sampleInput = { i: 0 };`);
    const run = await remit('--db', join(cwd, 'built.db'), '--workflow', built, 'run', '--name', 'forgot', '--run-id', 'b1');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^run b1 \(forgot\): completed/);
  });
});

describe('what the CLI says', () => {
  it('--db naming a folder: a store error saying it is a folder (EISDIR, exit 8), for every command', async () => {
    const folder = join(cwd, 'a-folder');
    mkdirSync(folder, { recursive: true });
    const message = `store sqlite:${folder}: open failed (EISDIR): it is a folder, not a database file: name the file, e.g. --db ${join(folder, 'remit.db')}`;
    for (const args of [['runs'], ['inspect', 'x'], ['scrub', '--all'], ['repair', 'x'], ['--workflow', COUNTER_MODULE, 'run'], ['--workflow', COUNTER_MODULE, 'continue', 'x']]) {
      const out = await remit('--db', folder, ...args);
      expect(out.code, args.join(' ')).toBe(8);
      expect(out.stderr, args.join(' ')).toBe(`remit: REMIT_STORE: ${message}\n`);
    }
    const json = await remit('--db', folder, '--json', 'runs');
    const cause = { name: 'Error', message: `it is a folder, not a database file: name the file, e.g. --db ${join(folder, 'remit.db')}` };
    expect(json.json()).toEqual({ error: { code: 'REMIT_STORE', name: 'StoreError', message, store: `sqlite:${folder}`, operation: 'open', storeCode: 'EISDIR', cause }, exitCode: 8 });
  });

  it('run --name naming no workflow of the module: REMIT_UNKNOWN_WORKFLOW, exit 6 (docs/errors.md)', async () => {
    const db = join(cwd, 'name.db');
    const out = await remit('--db', db, '--workflow', COUNTER_MODULE, '--json', 'run', '--name', 'nope');
    expect(out.code).toBe(6);
    expect(out.json()).toEqual({
      error: {
        code: 'REMIT_UNKNOWN_WORKFLOW',
        name: 'UnknownWorkflowError',
        message: `no workflow named "nope" is registered (known: counter); --name picks a workflow of the module ${COUNTER_MODULE}`,
        workflow: 'nope',
        known: ['counter'],
      },
      exitCode: 6,
    });
    expect(existsSync(db)).toBe(false);
  });

  it('fork --continue failing after the fork was written: under --json, `forked` beside the error names the fork', async () => {
    const db = join(cwd, 'forked.db');
    expect((await remit('--db', db, '--workflow', COUNTER_MODULE, 'run', '--run-id', 'src')).code).toBe(0);
    // The counter's own definition whose node code throws: the fork is written, continuing it fails.
    const out = await remit('--db', db, '--workflow', COUNTER_THROWING_MODULE, '--json', 'fork', 'src', '1', '--run-id', 'f1', '--continue');
    expect(out.code).toBe(9);
    const body = out.json();
    expect(Object.keys(body)).toEqual(['error', 'forked', 'exitCode']);
    expect(body).toMatchObject({ error: { code: 'REMIT_HANDLER_THREW' }, forked: { runId: 'f1', sourceRunId: 'src', checkpointSeq: 1, forkSeq: 2 }, exitCode: 9 });
    // A failure before anything was written has no `forked`.
    const refused = await remit('--db', db, '--workflow', COUNTER_THROWING_MODULE, '--json', 'fork', 'src', '1', '--run-id', 'f1', '--continue');
    expect(refused.json()).toMatchObject({ error: { code: 'REMIT_FORK_TARGET_EXISTS' } });
    expect(refused.json()).not.toHaveProperty('forked');
  });
});
