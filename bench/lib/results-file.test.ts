/**
 * A latest.json the bench cannot use is refused by name before any work: `--render` of a folder
 * without one ended in a stack trace, and a damaged one made a run of some suites throw after
 * every suite had run, losing their figures.
 */

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RESULTS_SCHEMA, ResultsFileError, readResultsDocument } from './results.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function folderWith(latest: string | null): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-results-file-'));
  if (latest !== null) fs.writeFileSync(path.join(dir, 'latest.json'), latest);
  return dir;
}

describe('readResultsDocument', () => {
  it('names a missing file, text that is not JSON, and another schema', () => {
    const missing = path.join(folderWith(null), 'latest.json');
    expect(() => readResultsDocument(missing)).toThrow(ResultsFileError);
    expect(() => readResultsDocument(missing)).toThrow(/latest\.json does not exist \(run a suite first/);
    expect(() => readResultsDocument(path.join(folderWith('{"schema": '), 'latest.json'))).toThrow(/latest\.json: not JSON/);
    expect(() => readResultsDocument(path.join(folderWith('{"schema":"other/9","suites":[]}'), 'latest.json'))).toThrow(/not a results document of schema remit-bench\/1 \(schema "other\/9"\)/);
    expect(() => readResultsDocument(path.join(folderWith('null'), 'latest.json'))).toThrow(/\(schema null\)/);
    expect(() => readResultsDocument(path.join(folderWith(`{"schema":"${RESULTS_SCHEMA}"}`), 'latest.json'))).toThrow(ResultsFileError);
  });

  it('reads a results document', () => {
    const doc = readResultsDocument(path.join(folderWith(`{"schema":"${RESULTS_SCHEMA}","suites":[],"targets":[]}`), 'latest.json'));
    expect(doc.suites).toEqual([]);
  });
});

describe('bench/run.ts with an unusable latest.json', () => {
  const bench = (args: string[]) => spawnSync('bash', [path.join(repoRoot, 'scripts', 'tsx.sh'), path.join(repoRoot, 'bench', 'run.ts'), ...args], {
    encoding: 'utf8', timeout: 60_000,
  });

  it('--render of a folder without one: one line, exit 2, nothing written', () => {
    const dir = folderWith(null);
    const r = bench(['--render', '--out', dir]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^bench: .*latest\.json does not exist/)]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('--render of a folder that does not exist: refused without creating it', () => {
    const dir = path.join(folderWith(null), 'not-there');
    const r = bench(['--render', '--out', dir]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^bench: .*not-there\/latest\.json does not exist/)]);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('a run of some suites into a folder whose latest.json is damaged: refused before any suite runs, the file kept', () => {
    const dir = folderWith('{"schema": ');
    const r = bench(['--suite', 'storage', '--out', dir]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^bench: .*latest\.json: not JSON/m);
    expect(r.stderr).not.toMatch(/storage:/);
    expect(fs.readFileSync(path.join(dir, 'latest.json'), 'utf8')).toBe('{"schema": ');
    expect(fs.readdirSync(dir)).toEqual(['latest.json']);
  });
});
