// The crash demo as a user runs it (`npm run demo`): a child killed with SIGKILL mid-run, recovered,
// every effect applied once at the deduplicating sink.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from 'remit/core';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'remit-demo-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const core = await createCore('wasm').then(() => 'wasm', () => 'reference');

describe(`npm run demo (${core} core)`, () => {
  it('kills a child with SIGKILL mid-run, recovers the run, and applies every effect once', () => {
    const out = spawnSync(process.execPath, ['--conditions=remit-source', '--import', import.meta.resolve('tsx'), MAIN, '--core', core, '--json'], {
      cwd, encoding: 'utf8', env: { ...process.env, NODE_NO_WARNINGS: '1' }, timeout: 90_000,
    });
    expect(out.status, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({
      childSignal: 'SIGKILL', finalStatus: 'completed', exactlyOnce: true,
      effects: { chargeCard: { invocations: 2, applied: 1 }, notifyCustomer: { invocations: 1, applied: 1 } },
    });
  });

  it('refuses a fault spec it cannot parse, with exit code 2', () => {
    const out = spawnSync(process.execPath, ['--conditions=remit-source', '--import', import.meta.resolve('tsx'), MAIN, '--kill-at', 'nowhere'], {
      cwd, encoding: 'utf8', env: { ...process.env, NODE_NO_WARNINGS: '1' }, timeout: 60_000,
    });
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/--kill-at/);
  });
});
