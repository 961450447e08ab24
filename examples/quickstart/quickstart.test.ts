// The README's quickstart must keep working: run the file as a user would, in a fresh folder, and
// the README must show it as it is. (scripts/consumer-test.sh runs it from installed tarballs.)
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const quickstartPath = fileURLToPath(new URL('./quickstart.mjs', import.meta.url));
const readmePath = fileURLToPath(new URL('../../README.md', import.meta.url));
// tsx's loader by absolute URL: the fresh folder has no node_modules to resolve it from.
const tsxLoaderUrl = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const workDir = mkdtempSync(join(tmpdir(), 'remit-quickstart-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('quickstart', () => {
  for (const core of ['wasm', 'reference'] as const) {
    it(`completes the welcome workflow durably on the ${core} core`, () => {
      const output = execFileSync(process.execPath, ['--conditions=remit-source', '--import', tsxLoaderUrl, quickstartPath], {
        cwd: workDir,
        env: { ...process.env, REMIT_CORE: core },
        encoding: 'utf8',
      });
      expect(output).toMatch(/^completed/);
      expect(output).toMatch(/messageId: 'msg-welcome-[^']+sendWelcome[^']+'/);
      expect(existsSync(join(workDir, '.remit', 'app.db'))).toBe(true);
    });
  }

  it('is shown in the README as it is', () => {
    const code = readFileSync(quickstartPath, 'utf8').split('\n').filter((l) => !l.startsWith('//')).join('\n').trim();
    expect(readFileSync(readmePath, 'utf8')).toContain(code);
  });
});
