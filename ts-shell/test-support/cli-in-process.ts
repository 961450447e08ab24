/**
 * The `remit` CLI run in the test's own process (fast: no tsx start-up), in a given working
 * folder, with stdout and stderr captured. Child-process runs stay in the tests that need them
 * (a hang, a real exit).
 */

import { vi } from 'vitest';
import { runCli } from '../src/cli/main.js';

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
  json(): any;
}

/** A function that runs `remit <args>` in `cwd` and resolves with its exit code and output. */
export function cliInProcess(cwd: string): (...args: string[]) => Promise<CliOutcome> {
  return async (...args: string[]) => {
    let stdout = '';
    let stderr = '';
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
    const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
    const previous = process.cwd();
    process.chdir(cwd);
    let code: number;
    try {
      process.exitCode = 0;
      code = await runCli(['node', 'remit', ...args]);
    } finally {
      process.exitCode = 0;
      process.chdir(previous);
      out.mockRestore();
      err.mockRestore();
    }
    return { code, stdout, stderr, json: () => JSON.parse(stdout) };
  };
}
