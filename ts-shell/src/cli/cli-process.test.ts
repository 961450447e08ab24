/**
 * The `remit` bin as a process, with workflow modules that misbehave as real ones do: one that
 * keeps the event loop alive (a timer, as a database pool or an HTTP agent would) must not keep the
 * command from ending once it has printed its result, all of it, with its exit code; one whose
 * top-level await never settles (or whose createWorkflows() promise never does) must not end the
 * process silently with Node's code 13, and neither must node code whose promise never settles.
 * Child processes (src/cli/main.ts under tsx), each with a timeout: a hang is a failure here.
 */

import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../core/index.js';
import { Remit } from '../remit.js';
import { SqliteStore } from '../store/sqlite.js';
import { counter } from '../../test-support/counter-workflow.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const COUNTER = pathToFileURL(fileURLToPath(new URL('../../test-support/counter-workflow.ts', import.meta.url))).href;
const WORKFLOW = pathToFileURL(fileURLToPath(new URL('../workflow/workflow.ts', import.meta.url))).href;
const cwd = mkdtempSync(join(tmpdir(), 'remit-cli-process-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** A workflow module in the scratch folder, importing the repository's by file URL. */
function moduleFile(name: string, source: string): string {
  const path = join(cwd, name);
  writeFileSync(path, source);
  return path;
}

const TIMER = moduleFile('timer.mjs', `export { default, sampleInput } from '${COUNTER}';\nsetInterval(() => {}, 1000);\n`);
const NEVER_LOADS = moduleFile('never-loads.mjs', `export { default, sampleInput } from '${COUNTER}';\nawait new Promise(() => {});\n`);
const NEVER_LOADS_KEPT_ALIVE = moduleFile(
  'never-loads-kept-alive.mjs',
  `export { default, sampleInput } from '${COUNTER}';\nsetInterval(() => {}, 1000);\nawait new Promise(() => {});\n`,
);
const NEVER_CREATES = moduleFile('never-creates.mjs', 'export function createWorkflows() { return new Promise(() => {}); }\n');
const NEVER_SENDS = moduleFile(
  'never-sends.mjs',
  `import { counter } from '${COUNTER}';
import { END, workflow } from '${WORKFLOW}';
export default workflow({ name: 'stuck', version: '1', state: counter.stateSchema })
  .effect('send', { run: () => new Promise(() => {}), apply: (s) => s, next: END })
  .build();
export const sampleInput = { i: 0 };
`,
);

const ZOD = import.meta.resolve('zod');
/** Parks at `ask`, then node code whose promise never settles: `resume` and `continue` stall. */
const HANGS_AFTER_RESUME = moduleFile(
  'hangs-after-resume.mjs',
  `import { z } from '${ZOD}';
import { counter } from '${COUNTER}';
import { END, workflow } from '${WORKFLOW}';
export default workflow({ name: 'asks', version: '1', state: counter.stateSchema })
  .interrupt('ask', { resume: z.number(), apply: (s, v) => ({ i: v }), next: 'hang' })
  .pure('hang', { run: () => new Promise(() => {}), next: END })
  .build();
export const sampleInput = { i: 0 };
`,
);

/** The CLI in a child process; `status` is null when it had to be killed (it hung). */
function remitProcess(...args: string[]) {
  return remitProcessWith({}, ...args);
}

function remitProcessWith(env: NodeJS.ProcessEnv, ...args: string[]) {
  const out = spawnSync(process.execPath, ['--conditions=remit-source', '--import', import.meta.resolve('tsx'), MAIN, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NODE_NO_WARNINGS: '1', ...env },
    timeout: 30_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: out.status, signal: out.signal, stdout: out.stdout, stderr: out.stderr, json: () => JSON.parse(out.stdout) };
}

describe('a CommonJS workflow module (found by a review)', () => {
  it('module.exports = { workflows, sampleInput } and = { createWorkflows }: import() sees only their default export, and the CLI reads the names there', () => {
    const counterPath = fileURLToPath(COUNTER);
    const sources = [
      `module.exports = { workflows: [require(${JSON.stringify(counterPath)}).counter], sampleInput: { i: 2 } };`,
      `module.exports = { createWorkflows: () => [require(${JSON.stringify(counterPath)}).counter] };`,
    ];
    for (const [index, source] of sources.entries()) {
      const path = moduleFile(`commonjs-${index}.cjs`, `${source}\n`);
      const out = remitProcess('--db', join(cwd, `commonjs-${index}.db`), '--workflow', path, '--json', 'run', '--run-id', `c${index}`, '--input', '{"i":2}');
      expect(out.status, `${source}\n${out.stderr}`).toBe(0);
      expect(out.json(), source).toMatchObject({ runId: `c${index}`, status: 'completed' });
    }
  });

  it('a default object with the workflows keeps a sampleInput exported on its own (TypeScript\'s exports.default beside exports.sampleInput); a throwing getter is a usage error', () => {
    const counterPath = fileURLToPath(COUNTER);
    const cases: Array<[string, string]> = [
      ['split.cjs', `exports.sampleInput = { i: 1 };\nexports.default = { workflows: [require(${JSON.stringify(counterPath)}).counter] };\n`],
      ['split.mjs', `import { counter } from '${COUNTER}';\nexport const sampleInput = { i: 1 };\nexport default { workflows: [counter] };\n`],
    ];
    for (const [name, source] of cases) {
      const out = remitProcess('--db', join(cwd, `${name}.db`), '--workflow', moduleFile(name, source), '--json', 'run', '--run-id', name);
      expect(out.status, `${name}\n${out.stderr}`).toBe(0);
      expect(out.json(), name).toMatchObject({ runId: name, status: 'completed' });
    }
    const throwing = moduleFile('throwing.cjs', "module.exports = { get workflows() { throw new Error('no workflows here'); } };\n");
    const out = remitProcess('--db', join(cwd, 'throwing.db'), '--workflow', throwing, 'run');
    expect(out.status, out.stderr).toBe(2);
    expect(out.stderr).toContain(`--workflow ${throwing}: importing the module threw Error: no workflows here`);
  });
});

describe('a workflow module that keeps the event loop alive', () => {
  it('does not keep the command from ending: it prints its result and exits with its code', () => {
    const db = join(cwd, 'timer.db');
    const run = remitProcess('--db', db, '--workflow', TIMER, 'run', '--run-id', 't1');
    expect(run.signal, 'the CLI hung').toBeNull();
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^run t1 \(counter\): completed, head seq 4\n {2}state: \{"i":3\}\n$/);
    // An error's exit code too.
    const missing = remitProcess('--db', db, '--workflow', TIMER, '--json', 'continue', 'nope');
    expect(missing.signal, 'the CLI hung').toBeNull();
    expect(missing.status).toBe(3);
    expect(missing.json()).toMatchObject({ error: { code: 'REMIT_RUN_NOT_FOUND', runId: 'nope' }, exitCode: 3 });
  });

  it('a long output through a pipe is written whole before the process ends', async () => {
    const db = join(cwd, 'many.db');
    const store = new SqliteStore(db, { synchronous: 'NORMAL' });
    const remit = new Remit(store, await createCore('reference'), [counter]);
    // Far more than a pipe holds (64 KiB), so that an exit before the writes drained would cut it.
    for (let i = 0; i < 1500; i++) await remit.start(counter, { i: 0 }, { runId: `run-${String(i).padStart(4, '0')}-${'x'.repeat(60)}` });
    await store.close();
    const listed = remitProcess('--db', db, '--workflow', TIMER, '--json', 'runs');
    expect(listed.signal, 'the CLI hung').toBeNull();
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout.length).toBeGreaterThan(256 * 1024);
    expect(listed.json()).toHaveLength(1500);
  });
});

describe('a promise that never settles, with nothing left to run', () => {
  it('a module whose top-level await never settles is refused as a module that does not load (exit 2), not exit 13 without a word', () => {
    const db = join(cwd, 'never-loads.db');
    const json = remitProcess('--db', db, '--workflow', NEVER_LOADS, '--json', 'run');
    expect(json.status).toBe(2);
    expect(json.stderr).toBe('');
    expect(json.json()).toEqual({
      error: {
        name: 'UsageError',
        code: 'CLI_USAGE',
        message: `--workflow ${NEVER_LOADS}: importing the module never finished: its top-level await waits for a promise that never settles, and nothing is left to run (a workflow module must finish loading)`,
      },
      exitCode: 2,
    });
    const text = remitProcess('--db', db, '--workflow', NEVER_LOADS, 'run');
    expect(text.status).toBe(2);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(/^remit: usage: --workflow \S+never-loads\.mjs: importing the module never finished: its top-level await waits for a promise that never settles/);
    // `run` creates its database after the module loaded: none was created.
    expect(existsSync(db)).toBe(false);
  });

  it('a module whose top-level await never settles while a timer keeps the process alive: refused after REMIT_MODULE_LOAD_TIMEOUT_MS (it hung for ever)', () => {
    const db = join(cwd, 'never-loads-kept-alive.db');
    const out = remitProcessWith({ REMIT_MODULE_LOAD_TIMEOUT_MS: '1500' }, '--db', db, '--workflow', NEVER_LOADS_KEPT_ALIVE, 'run');
    expect(out.signal, 'the CLI hung').toBeNull();
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/^remit: usage: --workflow \S+never-loads-kept-alive\.mjs: importing the module did not finish within 1500 ms \(REMIT_MODULE_LOAD_TIMEOUT_MS\)/);
    expect(existsSync(db)).toBe(false);
    const bad = remitProcessWith({ REMIT_MODULE_LOAD_TIMEOUT_MS: 'soon' }, '--db', db, '--workflow', TIMER, 'run');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/REMIT_MODULE_LOAD_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647, got "soon"/);
  });

  it('a createWorkflows() whose promise never settles: the same, naming createWorkflows()', () => {
    const out = remitProcess('--db', join(cwd, 'never-creates.db'), '--workflow', NEVER_CREATES, 'run');
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/^remit: usage: --workflow \S+never-creates\.mjs: createWorkflows\(\) never finished: the promise it returned never settles, and nothing is left to run/);
  });

  it('node code whose promise never settles: an unexpected error (exit 1) that says so', () => {
    const db = join(cwd, 'never-sends.db');
    const out = remitProcess('--db', db, '--workflow', NEVER_SENDS, '--json', 'run', '--run-id', 's1');
    expect(out.status).toBe(1);
    expect(out.json()).toMatchObject({ error: { name: 'StalledError', code: 'CLI_STALLED', runId: 's1', message: expect.stringMatching(/^the command never finished: it waits for a promise that never settles/) }, exitCode: 1 });
  });

  it('a run started without --run-id that stalls names the run the library generated, its head and node (text and --json)', () => {
    const db = join(cwd, 'never-sends-unnamed.db');
    const json = remitProcess('--db', db, '--workflow', NEVER_SENDS, '--json', 'run');
    expect(json.status).toBe(1);
    const error = json.json().error;
    expect(error).toMatchObject({ name: 'StalledError', code: 'CLI_STALLED', runId: expect.stringMatching(/^stuck-[0-9a-f-]{36}$/), headSeq: expect.any(Number), node: 'send' });
    expect(error.message).toContain(`; run ${error.runId}, head seq ${error.headSeq}, at node send: see it with \`remit --db=${db} inspect ${error.runId}\``);
    const text = remitProcess('--db', db, '--workflow', NEVER_SENDS, 'run');
    expect(text.status).toBe(1);
    expect(text.stderr).toMatch(/^remit: CLI_STALLED: the command never finished: .*; run stuck-[0-9a-f-]{36}, head seq \d+, at node send: see it with `remit .* inspect stuck-[0-9a-f-]{36}`, drive it on with `remit .* continue stuck-/);
  });

  // The node is the one the durable log is at: the resumed interrupt, since the steps after it are written together.
  it('resume and continue that stall name their run and node', () => {
    const db = join(cwd, 'hangs-after-resume.db');
    expect(remitProcess('--db', db, '--workflow', HANGS_AFTER_RESUME, 'run', '--run-id', 'a1').status).toBe(0);
    const resumed = remitProcess('--db', db, '--workflow', HANGS_AFTER_RESUME, '--json', 'resume', 'a1', 'ask@1', '7');
    expect(resumed.status, resumed.stdout).toBe(1);
    expect(resumed.json().error).toMatchObject({ code: 'CLI_STALLED', runId: 'a1', node: 'ask' });
    const continued = remitProcess('--db', db, '--workflow', HANGS_AFTER_RESUME, 'continue', 'a1');
    expect(continued.status).toBe(1);
    expect(continued.stderr).toMatch(/^remit: CLI_STALLED: .*; run a1, head seq \d+, at node ask: /);
  });
});

describe('output that cannot be written (stdout on a full disk: /dev/full)', () => {
  it('is one CLI_OUTPUT line on stderr and exit code 1, no stack trace, and what the command wrote stands', () => {
    const db = join(cwd, 'full-output.db');
    const full = openSync('/dev/full', 'w');
    try {
      const run = spawnSync(process.execPath, ['--conditions=remit-source', '--import', import.meta.resolve('tsx'), MAIN, '--db', db, '--workflow', TIMER, 'run', '--run-id', 'f1'], {
        cwd, encoding: 'utf8', env: { ...process.env, NODE_NO_WARNINGS: '1' }, timeout: 30_000, stdio: ['ignore', full, 'pipe'],
      });
      expect(run.signal, 'the CLI hung').toBeNull();
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toMatch(/^remit: CLI_OUTPUT: could not write the command's output to standard output \(ENOSPC: .*\); what the command did stands, only its output is lost: see where the runs stand with `remit .*runs` before repeating a command that writes\n$/);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      closeSync(full);
    }
    // The run it started was recorded and finished: only the report of it was lost.
    const seen = remitProcess('--db', db, '--json', 'inspect', 'f1');
    expect(seen.status, seen.stderr).toBe(0);
    expect(seen.json()).toMatchObject({ runId: 'f1', status: 'completed' });
  });
});
