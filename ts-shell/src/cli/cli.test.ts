/**
 * The `remit` command as users run it, in a scratch folder so the default database
 * (./.remit/remit.db) lands there: once as a child process (src/cli/main.ts under tsx; the
 * consumer test runs the built bin from an installed tarball) and in this process for speed.
 * The refund example is the workflow module. Exit codes are part of the interface.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createCore } from '../core/index.js';
import { runCli } from './main.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const REFUND_MODULE = fileURLToPath(new URL('../../../examples/refund/index.ts', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'remit-cli-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const core = await createCore('wasm').then(() => 'wasm', () => 'reference');

/** The CLI in a child process (slow: tsx starts each time). */
function remitProcess(...args: string[]) {
  const out = spawnSync(process.execPath, ['--conditions=remit-source', '--import', import.meta.resolve('tsx'), MAIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NODE_NO_WARNINGS: '1' }, timeout: 60_000 });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr, json: () => JSON.parse(out.stdout) };
}

/** The same CLI in this process, output captured (fast); the working folder is the scratch one. */
async function remit(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const previousCwd = process.cwd();
  process.chdir(cwd);
  let code: number;
  try {
    process.exitCode = 0;
    code = await runCli(['node', 'remit', ...args]);
  } finally {
    process.exitCode = 0;
    process.chdir(previousCwd);
    out.mockRestore();
    err.mockRestore();
  }
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

describe(`remit CLI (${core} core)`, () => {
  it('starts as a process and prints help', () => {
    const help = remitProcess('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: remit/);
  });

  it('prints help, and refuses bad command lines with exit code 2 and a hint', async () => {
    const help = await remit('--help');
    expect(help.code).toBe(0);
    for (const command of ['run', 'resume', 'continue', 'fork', 'inspect', 'runs', 'repair']) expect(help.stdout).toContain(command);
    expect((await remit()).code).toBe(2);
    const noModule = await remit('run');
    expect(noModule.code).toBe(2);
    expect(noModule.stderr).toMatch(/needs your workflows: pass --workflow <module>/);
    const badJson = await remit('run', '--input', '{oops');
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/--input is not valid JSON/);
    const missing = await remit('resume', 'only-run-id');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing required argument/);
    expect((await remit('fork', 'r', 'three')).code).toBe(2);
    expect((await remit('--core', 'quantum', 'runs')).code).toBe(2);
  });

  it('runs, resumes, refuses, forks and inspects with meaningful exit codes', async () => {
    const run = await remit('--workflow', REFUND_MODULE, '--core', core, 'run', '--run-id', 'c1', '--json');
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ runId: 'c1', status: 'parked', interrupt: { id: 'managerApproval@6' } });

    const invalid = await remit('--workflow', REFUND_MODULE, '--core', core, 'resume', 'c1', 'managerApproval@6', '{"approved":"yes"}');
    expect(invalid.code).toBe(5);
    expect(invalid.stderr).toMatch(/REMIT_RESUME_VALUE_INVALID.*field approved/);

    const resumed = await remit('--workflow', REFUND_MODULE, '--core', core, '--json', 'resume', 'c1', 'managerApproval@6', '{"approved":true,"approver":"kim"}');
    expect(resumed.code).toBe(0);
    expect(resumed.json()).toMatchObject({ status: 'completed' });

    const again = await remit('--workflow', REFUND_MODULE, '--core', core, '--json', 'resume', 'c1', 'managerApproval@6', '{"approved":true,"approver":"kim"}');
    expect(again.code).toBe(4);
    expect(again.json()).toMatchObject({ exitCode: 4, error: { code: 'REMIT_ALREADY_CONSUMED', runId: 'c1', seq: 7 } });

    expect((await remit('--workflow', REFUND_MODULE, '--core', core, 'continue', 'c1', '--from', '1')).code).toBe(4);
    expect((await remit('--workflow', REFUND_MODULE, '--core', core, 'inspect', 'missing')).code).toBe(3);

    const inspect = await remit('--workflow', REFUND_MODULE, '--core', core, 'inspect', 'c1');
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toMatch(/EFFECT_INTENT\s+chargeCard .*key c1\/chargeCard\/2/);

    const fork = await remit('--workflow', REFUND_MODULE, '--core', core, '--json', 'fork', 'c1', '8', '--run-id', 'c1-redo', '--continue');
    expect(fork.code).toBe(0);
    expect(fork.json()).toMatchObject({ fork: { runId: 'c1-redo', forkSeq: 9 }, result: { status: 'completed' } });
    // An instance id it cannot use is a usage error naming the option.
    const badId = await remit('--instance-id', 'a\u0001b', '--json', 'runs');
    expect(badId.code).toBe(2);
    expect(badId.json()).toMatchObject({ error: { code: 'REMIT_OPTION_INVALID', option: 'instanceId' } });

    const runs = await remit('--workflow', REFUND_MODULE, '--core', core, '--json', 'runs');
    expect(runs.json().map((r: { runId: string; status: string }) => [r.runId, r.status])).toEqual([['c1', 'completed'], ['c1-redo', 'completed']]);
  });
});
