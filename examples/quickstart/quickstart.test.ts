// The README's quickstart must keep working: run the file as a user would, in a fresh folder.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const quickstartPath = fileURLToPath(new URL('./quickstart.ts', import.meta.url));
// tsx's loader by absolute URL: the fresh folder has no node_modules to resolve it from.
const tsxLoaderUrl = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const workDir = mkdtempSync(join(tmpdir(), 'remit-quickstart-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('quickstart', () => {
  for (const core of ['wasm', 'reference'] as const) {
    it(`completes the welcome workflow durably on the ${core} core`, () => {
      const output = execFileSync(process.execPath, ['--import', tsxLoaderUrl, quickstartPath], {
        cwd: workDir,
        env: { ...process.env, REMIT_CORE: core },
        encoding: 'utf8',
      });
      expect(output).toMatch(/^completed/);
      expect(output).toMatch(/messageId: 'msg-welcome-[^']+:sendWelcome:\d+'/);
      expect(existsSync(join(workDir, '.remit', 'quickstart.db'))).toBe(true);
    });
  }
});
