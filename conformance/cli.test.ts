/**
 * The command line (`remit-conformance`, `npm start`) as a user meets it: through a real process
 * of conformance/cli.ts, with tiny selections (one system, one cell) so that each test takes
 * seconds. Usage errors exit 2 before anything runs; a selection that would run nothing is one;
 * ids are taken once; --out is checked first; NOT RUN systems and the real --out are in every
 * report; the bin works from any directory; SIGINT and SIGTERM remove the work folder.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROPERTIES } from './harness/checkers/verdict.js';
import { generateScenario as generateGeneratedScenario } from './harness/generated/generator.js';
import type { GeneratedSection } from './harness/generated/campaign.js';
import { generatedMarkdown, generatedTerminal } from './harness/report/generated.js';
import { renderHtml } from './harness/report/html.js';
import { renderMarkdown } from './harness/report/markdown.js';
import { buildReport } from './harness/report/model.js';
import { renderTerminal } from './harness/report/terminal.js';
import { generateScenario } from './harness/scenario.js';
import { adapterSpec, findSystem, REPO_ROOT } from './harness/systems.js';

const TSX = path.join(REPO_ROOT, 'scripts', 'tsx.sh');
const CLI = path.join(REPO_ROOT, 'conformance', 'cli.ts');
const BIN = path.join(REPO_ROOT, 'conformance', 'bin', 'remit-conformance.mjs');
/** A cell that runs to verdicts on REMIT with SQLite in a few seconds. */
const CELL = 'after-commit:EFFECT_INTENT@charge/sigkill';

// Made when the tests run (not at import: `vitest list` imports this file and runs no hook).
let scratch = '';
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'remit-cli-test-'));
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
let scratchCount = 0;
function fresh(name: string): string {
  return path.join(scratch, `${name}-${scratchCount++}`);
}

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Called once the process is spawned (to signal it). */
  onSpawn?: (pid: number) => void;
  command?: string[];
}

function run(args: string[], options: RunOptions = {}): Promise<Ran> {
  const started = Date.now();
  const [command, ...prefix] = options.command ?? ['bash', TSX, CLI];
  const child = spawn(command!, [...prefix, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  options.onSpawn?.(child.pid!);
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, ms: Date.now() - started })));
}

/** Runs `cases` two at a time (two cores). */
async function runAll<T>(cases: T[], work: (c: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all([0, 1].map(async () => {
    while (next < cases.length) await work(cases[next++] as T);
  }));
}

describe('usage errors exit 2, say why, and run nothing', () => {
  it('a selection that would run no cell and no generated workflow is refused (it exited 0 with a full report)', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--generated-only', '--no-generated'], /nothing to run: --generated-only with --no-generated/],
      [['--system', 'remit-sqlite-wasm', '--generated-only'], /nothing to run: --generated-only with --system runs nothing without --generated <n>/],
      [['--system', 'langgraph-js', '--generated-only', '--generated', '5'], /nothing to run: .*only on REMIT's adapter.*langgraph-js/],
      [['--generated-only', '--generated', '0'], /nothing to run: --generated-only with --generated 0/],
    ];
    await runAll(cases, async ([args, message]) => {
      const out = fresh('out');
      const r = await run([...args, '--out', out, '--no-progress']);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
      expect(fs.existsSync(out), 'no report written').toBe(false);
    });
  });

  it('unknown ids, bad numbers, and --scenario / --generated-scenario without --system exit 2 (they exited 1; --seed "" ran as seed 0)', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--system', 'nope'], /--system: unknown system "nope"/],
      [['--system', ''], /--system: an empty system id/],
      [['--system', 'remit-sqlite-wasm', '--cell', 'nope'], /--cell: unknown cell "nope"/],
      [['--seed', 'abc'], /--seed must be an integer >= 0, got "abc"/],
      [['--seed', ''], /--seed must be an integer >= 0, got ""/],
      [['--jobs', '0'], /--jobs must be an integer >= 1, got "0"/],
      [['--generated', 'abc'], /--generated must be an integer >= 0, got "abc"/],
      [['--shrink-budget', '-1'], /--shrink-budget must be an integer >= 0, got "-1"/],
      [['--scenario', path.join(scratch, 'none.json')], /--scenario replays one scenario: name one --system/],
      [['--generated-scenario', path.join(scratch, 'none.json')], /--generated-scenario replays one scenario: name one --system/],
    ];
    await runAll(cases, async ([args, message]) => {
      const out = fresh('out');
      const r = await run([...args, '--out', out, '--no-progress']);
      expect(r.code, `${JSON.stringify(args)}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(fs.existsSync(out), 'no report written').toBe(false);
    });
  });

  it('a missing, unparsable or empty --scenario file is refused naming the file (an empty one reported "holds 1/1")', async () => {
    const missing = path.join(scratch, 'missing.json');
    const unparsable = path.join(scratch, 'unparsable.json');
    fs.writeFileSync(unparsable, 'x{');
    const empty = path.join(scratch, 'empty-steps.json');
    fs.writeFileSync(empty, JSON.stringify({ ...generateScenario(CELL, 1), steps: [] }));
    const incoherent = path.join(scratch, 'incoherent-steps.json');
    fs.writeFileSync(incoherent, JSON.stringify({ ...generateScenario(CELL, 1), steps: ['resume-duplicate'] }));
    const cases: Array<[string, RegExp]> = [
      [missing, /scenario file .*missing\.json cannot be read/],
      [unparsable, /scenario file .*unparsable\.json is not JSON/],
      [empty, /scenario file .*empty-steps\.json: steps is empty/],
      [incoherent, /scenario file .*incoherent-steps\.json: steps \[resume-duplicate\] are not a schedule/],
    ];
    await runAll(cases, async ([file, message]) => {
      const out = fresh('out');
      const r = await run(['--system', 'remit-memory-reference', '--scenario', file, '--out', out, '--no-progress']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).not.toMatch(/holds 1\/1/);
      expect(fs.existsSync(out)).toBe(false);
    });
  });

  it('--generated-scenario on a system that is not REMIT\'s adapter is refused (it ran, reported an adapter error as violations and exited 0)', async () => {
    const file = path.join(scratch, 'generated.json');
    fs.writeFileSync(file, JSON.stringify(generateGeneratedScenario(1, 0, 'sigkill').scenario));
    const r = await run(['--system', 'langgraph-js', '--generated-scenario', file]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--generated-scenario: generated workflows run only on REMIT's adapter .*not on langgraph-js/);
    expect(r.stdout).toBe('');
    const unparsable = path.join(scratch, 'generated-unparsable.json');
    fs.writeFileSync(unparsable, '{');
    const bad = await run(['--system', 'remit-memory-reference', '--generated-scenario', unparsable]);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toMatch(/generated scenario file .*generated-unparsable\.json is not JSON/);
  });

  it('an --out that is a file is refused before the campaign (it ran every cell, then failed with EEXIST, exit 1)', async () => {
    const file = path.join(scratch, 'a-file');
    fs.writeFileSync(file, 'not a folder');
    const r = await run(['--system', 'remit-sqlite-reference', '--cell', CELL, '--out', file, '--no-progress']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--out .*a-file exists and is not a folder/);
    expect(r.stdout).toBe('');
    const under = await run(['--system', 'remit-sqlite-reference', '--cell', CELL, '--out', path.join(file, 'sub'), '--no-progress']);
    expect(under.code, under.stderr).toBe(2);
    expect(under.stderr).toMatch(/--out .*a-file\/sub cannot be made or written/);
  });

  it('--help lists the exit codes', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const line of [/^ {2}0 {4}every REMIT profile/m, /^ {2}1 {4}a system could not run/m, /^ {2}2 {4}usage/m, /^ {2}10 {3}a REMIT profile shows a violation/m, /^ {2}130 {2}interrupted/m]) {
      expect(r.stdout).toMatch(line);
    }
  });
});

describe('what runs, and what the reports say', () => {
  it('a repeated --system or --cell runs once (two copies ran at once in one cell folder: FILE_REPLACED, exit 10; a cell was counted twice)', async () => {
    const out = fresh('out');
    const r = await run([
      '--system', 'remit-sqlite-reference,remit-sqlite-reference',
      '--cell', CELL, '--cell', `${CELL},${CELL}`,
      '--out', out, '--no-progress', '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { systems: Array<{ system: string; cells: Array<{ cellId: string }>; properties: Record<string, { status: string; holds: number }> }> };
    expect(report.systems.map((s) => s.system)).toEqual(['remit-sqlite-reference']);
    expect(report.systems[0]!.cells.map((c) => c.cellId)).toEqual([CELL]);
    for (const p of PROPERTIES) expect(report.systems[0]!.properties[p]).toMatchObject({ status: 'holds', holds: 1 });
  });

  it('systems left out (NOT RUN) are in conformance.json (what --json prints), .md, .html and the terminal report, not only on stderr', async () => {
    const out = fresh('out');
    const r = await run(['--cell', 'inside-pure:compute/throw', '--no-generated', '--out', out, '--no-progress'], { env: { REMIT_SKIP_PYTHON: '1' } });
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(fs.readFileSync(path.join(out, 'conformance.json'), 'utf8')) as { notRun: Array<{ system: string; reason: string }> };
    expect(json.notRun.map((u) => u.system)).toEqual(['langgraph-py', 'crewai', 'pydantic-graph']);
    for (const u of json.notRun) expect(u.reason).toMatch(/REMIT_SKIP_PYTHON=1/);
    const md = fs.readFileSync(path.join(out, 'conformance.md'), 'utf8');
    const html = fs.readFileSync(path.join(out, 'conformance.html'), 'utf8');
    for (const id of ['langgraph-py', 'crewai', 'pydantic-graph']) {
      expect(md).toMatch(new RegExp(`- \`${id}\`: REMIT_SKIP_PYTHON=1`));
      expect(html).toMatch(new RegExp(`<li><code>${id}</code>: REMIT_SKIP_PYTHON=1`));
      expect(r.stdout).toMatch(new RegExp(`^NOT RUN ${id}: REMIT_SKIP_PYTHON=1`, 'm'));
      // Once on stdout: the terminal report names it, the CLI does not print it again.
      expect(r.stdout.match(new RegExp(`NOT RUN ${id}:`, 'g'))?.length).toBe(1);
    }
  });

  it('replay commands in .md and .html name the --out folder, not reports/', async () => {
    const out = path.relative(REPO_ROOT, fresh('out'));
    // The ignored-key canary violates effect exactly-once in this cell; shrinking writes a smallest reproduction.
    const r = await run(['--system', 'canary-key', '--cell', 'in-handler-after-effect:charge/sigkill', '--shrink-budget', '1', '--out', out, '--no-progress']);
    expect(r.code, r.stderr).toBe(0);
    const md = fs.readFileSync(path.join(REPO_ROOT, out, 'conformance.md'), 'utf8');
    const html = fs.readFileSync(path.join(REPO_ROOT, out, 'conformance.html'), 'utf8');
    const replay = `npm start -- --system canary-key --scenario ${out}/repro/canary-key/smallest-effect-exactly-once.json`;
    expect(md).toContain(replay);
    expect(html).toContain(replay);
    expect(md).not.toContain('reports/repro');
    expect(html).not.toContain('reports/repro');
    expect(fs.existsSync(path.join(REPO_ROOT, out, 'repro', 'canary-key', 'smallest-effect-exactly-once.json'))).toBe(true);
  });
});

describe('reports name NOT RUN systems and the folder they are written to (renderers)', () => {
  const notRun = [{ system: 'crewai', reason: 'REMIT_SKIP_PYTHON=1 is set' }];
  const section = {
    format: 'remit-conformance-generated/1',
    seed: 1,
    count: 1,
    systems: [{
      system: 'canary-transform', label: 'Canary', canary: true, workflows: 1, cells: 1, faultedCells: 1,
      nodes: { pure: 1, effect: 0, interrupt: 0 }, loops: 0, faults: { armed: {}, fired: 0, notFired: [] }, ends: {}, poisons: {},
      properties: Object.fromEntries(PROPERTIES.map((p) => [p, { holds: 0, violated: 1, notApplicable: 0 }])),
      violations: [{ id: 'gen-0', properties: ['checkpoint-validity'], evidence: ['x'] }],
      reproductions: [{ property: 'checkpoint-validity', from: 'gen-0', scenario: {}, shrinkRuns: 0, removed: [], evidence: [] }],
    }],
  } as unknown as GeneratedSection;

  it('every format lists the systems not run', () => {
    const report = buildReport(1, 'quick', [], notRun);
    expect(report.notRun).toEqual(notRun);
    expect(renderMarkdown(report)).toContain('- `crewai`: REMIT_SKIP_PYTHON=1 is set');
    expect(renderHtml(report)).toContain('<li><code>crewai</code>: REMIT_SKIP_PYTHON=1 is set</li>');
    expect(renderTerminal(report, null, false)).toContain('NOT RUN crewai: REMIT_SKIP_PYTHON=1 is set');
  });

  it('the generated section names the --out folder (the terminal hard-coded reports/repro/generated)', () => {
    expect(generatedTerminal(section, '/tmp/elsewhere').join('\n')).toContain('1 shrunk reproduction(s) in /tmp/elsewhere/repro/generated/canary-transform/');
    expect(generatedMarkdown(section, 'out2').join('\n')).toContain('--generated-scenario out2/repro/generated/canary-transform/smallest-checkpoint-validity.json');
    expect(generatedMarkdown(section).join('\n')).toContain('--generated-scenario reports/repro/generated/canary-transform/smallest-checkpoint-validity.json');
  });
});

describe('the bin and interrupts', () => {
  it('the remit-conformance bin runs from a directory outside the repository (it failed: Cannot find package \'tsx\')', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'conformance', 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(path.resolve(REPO_ROOT, 'conformance', pkg.bin['remit-conformance']!)).toBe(BIN);
    // As npm installs it: a link in some .bin folder, run from elsewhere.
    const elsewhere = fresh('cwd');
    fs.mkdirSync(elsewhere);
    const link = path.join(elsewhere, 'remit-conformance');
    fs.symlinkSync(BIN, link);
    const help = await run(['--help'], { cwd: elsewhere, command: [link] });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/Usage: remit-conformance/);
    const usage = await run(['--jobs', '0'], { cwd: elsewhere, command: [link] });
    expect(usage.code, usage.stderr).toBe(2);
    const cell = await run(['--system', 'remit-sqlite-reference', '--cell', CELL, '--out', 'r', '--no-progress'], { cwd: elsewhere, command: [link] });
    expect(cell.code, cell.stderr).toBe(0);
    expect(cell.stdout).toMatch(/Prefix continuation +holds 1\/1/);
    expect(fs.existsSync(path.join(elsewhere, 'r', 'conformance.json'))).toBe(true);
  });

  for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
    it(`${signal} removes the work folder and exits ${code} (the folder was left in TMPDIR)`, async () => {
      const tmp = fresh('tmpdir');
      fs.mkdirSync(tmp);
      let pid = 0;
      const done = run(['--system', 'remit-sqlite-reference', '--cell', CELL, '--out', fresh('out'), '--no-progress'], {
        env: { TMPDIR: tmp },
        onSpawn: (p) => (pid = p),
      });
      // Wait until the campaign has started a cell: its store folder is in the work folder.
      const deadline = Date.now() + 60_000;
      const started = () => fs.readdirSync(tmp).filter((n) => n.startsWith('remit-conformance-')).some((n) => fs.existsSync(path.join(tmp, n, 'remit-sqlite-reference')));
      while (!started() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(started(), 'the campaign started').toBe(true);
      process.kill(pid, signal);
      const r = await done;
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toMatch(new RegExp(`${signal}: stopping; removing the work folder`));
      expect(fs.readdirSync(tmp).filter((n) => n.startsWith('remit-'))).toEqual([]);
    });
  }

  const hasScript = fs.existsSync('/usr/bin/script');
  it.skipIf(!hasScript)('Ctrl-C on a terminal stops the progress bar (the cursor is shown again), removes the work folder, exits 130', async () => {
    const tmp = fresh('tmpdir');
    fs.mkdirSync(tmp);
    const log = fresh('tty.log');
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = ['bash', TSX, CLI, '--system', 'remit-sqlite-reference', '--cell', CELL, '--out', fresh('out')].map(quote).join(' ');
    // util-linux script(1) gives the CLI a terminal; a ^C written to it is the terminal's SIGINT to
    // the whole foreground process group, adapters included, as a user's Ctrl-C.
    const child = spawn('/usr/bin/script', ['-qfec', command, log], { env: { ...process.env, TMPDIR: tmp }, stdio: ['pipe', 'ignore', 'ignore'] });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    const started = () => fs.readdirSync(tmp).filter((n) => n.startsWith('remit-conformance-')).some((n) => fs.existsSync(path.join(tmp, n, 'remit-sqlite-reference')));
    while (!started() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(started(), 'the campaign started').toBe(true);
    child.stdin.write('\u0003');
    expect(await exited).toBe(130);
    const screen = fs.readFileSync(log, 'utf8');
    const hidden = screen.indexOf('\u001b[?25l');
    expect(hidden, 'the bar hid the cursor').toBeGreaterThanOrEqual(0);
    expect(screen.indexOf('\u001b[?25h', hidden), 'and it is shown again').toBeGreaterThan(hidden);
    expect(screen).toMatch(/SIGINT: stopping; removing the work folder/);
    expect(fs.readdirSync(tmp).filter((n) => n.startsWith('remit-'))).toEqual([]);
  });
});

describe('CrewAI keeps its lock files in the campaign folder', () => {
  it('its adapter runs with TMPDIR in the system\'s private folder (crewai:<hash>.lock files were left in the machine\'s TMPDIR)', () => {
    const stateDir = fresh('state');
    const spec = adapterSpec(findSystem('crewai'), stateDir);
    expect(spec.env?.['TMPDIR']).toBe(path.join(stateDir, 'tmp'));
    expect(fs.statSync(path.join(stateDir, 'tmp')).isDirectory()).toBe(true);
  });
});
