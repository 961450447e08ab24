/**
 * The store contract suite can fail: run on each broken store of
 * `../../test-support/store-mutants.ts` (the memory store with one promise of the Store interface
 * broken) it reports at least one failure, and on the memory store itself none. The suite runs in
 * a vitest of its own (`store-mutants.vitest.config.ts`: the mutants' failures are its expected
 * outcome, so the normal test run, which includes only `*.test.ts`, never runs them), with a JSON
 * report read here.
 */

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Not store-mutants.contract.ts: importing it would run the mutants' suites here.
import { CONTROL_NAME, mutantSuiteName, STORE_MUTANTS } from '../../test-support/store-mutants.js';

interface JsonTest { ancestorTitles: string[]; title: string; status: string; failureMessages: string[] }
interface JsonReport { numTotalTests: number; testResults: { name: string; message: string; assertionResults: JsonTest[] }[] }

const config = fileURLToPath(new URL('../../test-support/store-mutants.vitest.config.ts', import.meta.url));
const vitestBin = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const suiteOf = (name: string) => `store contract: ${name}`;

describe('the store contract suite fails each broken store and passes the memory store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'remit-store-mutants-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const bySuite = new Map<string, JsonTest[]>();
  let report: JsonReport;

  beforeAll(async () => {
    const output = join(dir, 'report.json');
    // The child is a vitest of its own: none of this worker's VITEST_* variables, no mutant filter.
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST') && key !== 'REMIT_STORE_MUTANT'));
    const run = await new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
      execFile(process.execPath, [vitestBin, 'run', '--config', config, '--reporter=json', `--outputFile=${output}`], { env, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stderr, stdout });
      });
    });
    try {
      report = JSON.parse(readFileSync(output, 'utf8')) as JsonReport;
    } catch (cause) {
      throw new Error(`the mutant run wrote no report (exit ${run.code}): ${run.stderr.slice(-4000)}${run.stdout.slice(-2000)}`, { cause });
    }
    for (const file of report.testResults) {
      for (const test of file.assertionResults) {
        const suite = test.ancestorTitles[0] ?? '';
        bySuite.set(suite, [...(bySuite.get(suite) ?? []), test]);
      }
    }
  }, 120_000);

  it('loads the fixture and runs the suite on the control and on every mutant', () => {
    expect(report.testResults.map((f) => f.message).filter((m) => m !== '')).toEqual([]);
    const names = STORE_MUTANTS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...bySuite.keys()].sort()).toEqual([CONTROL_NAME, ...names.map(mutantSuiteName)].map(suiteOf).sort());
  });

  it('passes the memory store (the control): every test of the suite', () => {
    const tests = bySuite.get(suiteOf(CONTROL_NAME)) ?? [];
    expect(tests.length).toBeGreaterThan(30);
    expect(tests.filter((t) => t.status !== 'passed').map((t) => `${t.title}: ${t.failureMessages[0] ?? t.status}`)).toEqual([]);
  });

  it.each(STORE_MUTANTS.map((m) => [m.name, m.breaks] as const))('fails mutant %s (%s)', (name) => {
    const tests = bySuite.get(suiteOf(mutantSuiteName(name))) ?? [];
    // The whole suite ran on it (a test skipped is not a test passed) ...
    expect(tests.map((t) => t.title)).toEqual((bySuite.get(suiteOf(CONTROL_NAME)) ?? []).map((t) => t.title));
    expect(tests.filter((t) => t.status !== 'passed' && t.status !== 'failed')).toEqual([]);
    // ... and at least one of its tests failed.
    expect(tests.filter((t) => t.status === 'failed').length, `no test of the store contract failed on mutant ${name}`).toBeGreaterThan(0);
  });
});
