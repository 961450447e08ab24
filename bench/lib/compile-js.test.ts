/**
 * Where the compiled children go matters: their imports ('remit', LangGraph) resolve through the
 * repository's node_modules, so they are compiled inside it (SuiteContext.codeDir, under
 * bench/results/tmp/). Compiled under an --out outside the repository they could not load at all:
 * the resume suite failed with ERR_MODULE_NOT_FOUND whenever --out was given elsewhere.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileChildren, runJsonChild } from './compile-js.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('the compiled resume child', () => {
  it('loads REMIT and LangGraph when compiled inside the repository, and cannot outside it (why codeDir is not under --out)', async () => {
    const parent = path.join(repoRoot, 'bench', 'results', 'tmp');
    fs.mkdirSync(parent, { recursive: true });
    const inside = fs.mkdtempSync(path.join(parent, 'compile-test-'));
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'compile-test-'));
    try {
      for (const impl of ['remit', 'langgraph']) {
        const child = compileChildren(repoRoot, path.join(inside, 'js'));
        const { report } = await runJsonChild(repoRoot, child, [impl, 'import', path.join(inside, 'unused.db'), '10']);
        expect(report).toMatchObject({ exports: expect.any(Number) });
      }
      const stranded = compileChildren(repoRoot, path.join(outside, 'js'));
      await expect(runJsonChild(repoRoot, stranded, ['remit', 'import', path.join(outside, 'unused.db'), '10'])).rejects.toThrow(/ERR_MODULE_NOT_FOUND|Cannot find (package|module)/);
    } finally {
      fs.rmSync(inside, { recursive: true, force: true });
      fs.rmSync(outside, { recursive: true, force: true });
    }
  }, 60_000);
});
