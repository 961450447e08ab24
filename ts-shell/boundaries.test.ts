/**
 * The library's import boundary (.dependency-cruiser.cjs), checked on the real tree, and a canary
 * that plants one violation of each of its nine rules in a scratch tree to show the check can fail
 * (a cycle through value imports, h.ts <-> i.ts, is reported once, on its first edge).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs'));

async function violations(baseDir: string, folders: string[]): Promise<string[]> {
  const previous = process.cwd();
  process.chdir(baseDir);
  try {
    const result = await cruise(folders, { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } });
    const output = result.output as ICruiseResult;
    return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
  } finally {
    process.chdir(previous);
  }
}

describe('the library boundary', () => {
  it('holds on the repository', async () => {
    expect(await violations(ROOT, ['ts-shell', 'conformance', 'bench', 'equivalence', 'examples'])).toEqual([]);
  });

  describe('canary: each forbidden import is caught', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'remit-boundary-'));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(scratch, path)), { recursive: true });
      writeFileSync(join(scratch, path), text);
    };
    write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }));
    write('conformance/harness/cells.ts', 'export const cells = 1;\n');
    write('ts-shell/src/testing/fault-spec.ts', 'export const spec = 1;\n');
    write('ts-shell/src/errors.ts', 'export const e = 1;\n');
    write('ts-shell/src/store/sqlite.ts', 'export const s = 1;\n');
    write('ts-shell/src/a.ts', "import { cells } from '../../conformance/harness/cells.js';\nexport const a = cells;\n");
    write('ts-shell/src/b.ts', "import { spec } from './testing/fault-spec.js';\nexport const b = spec;\n");
    write('ts-shell/src/core/c.ts', "import { s } from '../store/sqlite.js';\nexport const c = s;\n");
    write('examples/d.ts', "import { e } from '../ts-shell/src/errors.js';\nexport const d = e;\n");
    write('ts-shell/src/e.ts', "import { it } from 'vitest';\nexport const e = it;\n");
    write('ts-shell/src/f.ts', "import pg from 'pg';\nexport const f = pg;\n");
    write('ts-shell/src/testing/g.ts', "import { it } from 'vitest';\nexport const g = it;\n");
    write('ts-shell/test-support/helper.ts', 'export const helper = 1;\n');
    write('ts-shell/src/testing/j.ts', "import { helper } from '../../test-support/helper.js';\nexport const j = helper;\n");
    write('ts-shell/src/h.ts', "import { i } from './i.js';\nexport const h = (): number => i();\n");
    write('ts-shell/src/i.ts', "import { h } from './h.js';\nexport const i = (): number => h();\n");
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');

    it('finds them all, by rule', async () => {
      const found = await violations(scratch, ['ts-shell', 'examples', 'conformance']);
      // Rule and importing file; the resolved target inside node_modules depends on the package.
      expect(found.map((v) => v.replace(/ -> .*node_modules\/([^/]+)\/.*$/, ' -> $1')).sort()).toEqual([
        'core-is-pure: ts-shell/src/core/c.ts -> ts-shell/src/store/sqlite.ts',
        'library-imports-no-harness: ts-shell/src/a.ts -> conformance/harness/cells.ts',
        'library-imports-no-test-frameworks: ts-shell/src/e.ts -> vitest',
        'library-imports-no-testing-entry: ts-shell/src/b.ts -> ts-shell/src/testing/fault-spec.ts',
        'no-circular-in-library: ts-shell/src/h.ts -> ts-shell/src/i.ts',
        'other-workspaces-use-the-package: examples/d.ts -> ts-shell/src/errors.ts',
        'pg-only-in-the-postgres-store: ts-shell/src/f.ts -> pg',
        'testing-entry-imports-no-harness: ts-shell/src/testing/j.ts -> ts-shell/test-support/helper.ts',
        'testing-vitest-only-in-store-contract: ts-shell/src/testing/g.ts -> vitest',
      ]);
    });
  });
});
