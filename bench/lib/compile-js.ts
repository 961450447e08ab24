/**
 * Plain-JavaScript copies of the resume child and the bench modules it imports, so fresh processes
 * run the way a deployed service does: `node child.js`, no TypeScript loader. Under tsx every
 * TypeScript module and the jco-generated Wasm binding go through the loader's transform on each
 * cold start (seen here: importing the binding takes ~90 ms under tsx, ~6 ms under plain node), a
 * development cost that is not REMIT's. LangGraph is already JavaScript.
 *
 * TypeScript's own transpileModule (no type check, no bundling) writes each file to the same
 * relative path under `outDir`, which lies inside the repository: 'remit' then resolves through
 * node_modules to the library's compiled dist/ (built by scripts/setup.sh), as in a service.
 */

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SOURCE_DIRS = ['bench/children', 'bench/workloads'];
/** Modules of bench/lib the workloads import. */
const SOURCE_FILES = ['bench/lib/counting.ts'];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** Transpile; returns the path of the compiled resume child. */
export function compileChildren(repoRoot: string, outDir: string): string {
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'package.json'), JSON.stringify({ type: 'module', private: true }) + '\n');
  const files = [...SOURCE_DIRS.flatMap((dir) => sourceFiles(path.join(repoRoot, dir))), ...SOURCE_FILES.map((f) => path.join(repoRoot, f))];
  for (const file of files) {
    const rel = path.relative(repoRoot, file);
    const out = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      fileName: rel,
      compilerOptions: {
        module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, esModuleInterop: true, verbatimModuleSyntax: false,
      },
    });
    const target = path.join(outDir, rel.replace(/\.ts$/, '.js'));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, out.outputText);
  }
  return path.join(outDir, 'bench', 'children', 'resume-child.js');
}

/**
 * Run a compiled child with plain node (`nodeArgs` before the script, `args` after it) and parse
 * the last line it prints as its JSON report. Rejects, with the tail of its stderr, when it exits
 * non-zero. `wallMs` is spawn to exit.
 */
export function runJsonChild(cwd: string, child: string, args: string[], nodeArgs: string[] = []): Promise<{ report: unknown; wallMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    // As a deployed service: 'remit' is the built dist/, never the sources a parent's
    // --conditions=remit-source (scripts/tsx.sh, vitest) would pick, which plain node cannot load.
    const nodeOptions = (process.env['NODE_OPTIONS'] ?? '').replace(/--conditions=remit-source/g, '').trim();
    const p = spawn(process.execPath, [...nodeArgs, child, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: nodeOptions } });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => {
      const wallMs = performance.now() - t0;
      if (code !== 0) return reject(new Error(`child ${path.basename(child)} ${args.join(' ')} exited ${code}: ${err.trim().slice(-400)}`));
      resolve({ report: JSON.parse(out.trim().split('\n').pop() ?? '{}'), wallMs });
    });
  });
}
