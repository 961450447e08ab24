#!/usr/bin/env node
/**
 * The `remit-conformance` bin: runs conformance/cli.ts with the repository's own tsx and the
 * `remit-source` condition, from any directory (as scripts/tsx.sh does for `npm start`). A bare
 * `--import tsx` resolves tsx from the current directory, so cli.ts's own shebang works only
 * inside the repository. Plain JavaScript: it must run before any TypeScript loader is in place.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// This file's real path (npm links the bin through node_modules/.bin and a workspace link).
const here = path.dirname(fs.realpathSync(fileURLToPath(import.meta.url)));
const root = path.resolve(here, '..', '..');
const loader = path.join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');
if (!fs.existsSync(loader)) {
  process.stderr.write(`remit-conformance: tsx is not installed in the repository (${loader} is missing): run npm run setup in ${root}\n`);
  process.exit(1);
}
// NODE_OPTIONS passes the condition on to every process the harness starts.
const condition = '--conditions=remit-source';
const nodeOptions = (process.env.NODE_OPTIONS ?? '').split(/\s+/).includes(condition) ? process.env.NODE_OPTIONS : `${process.env.NODE_OPTIONS ?? ''} ${condition}`.trim();
const child = spawn(process.execPath, [condition, '--import', pathToFileURL(loader).href, path.join(root, 'conformance', 'cli.ts'), ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, NODE_OPTIONS: nodeOptions },
});
// The CLI handles SIGINT and SIGTERM itself (it removes its work folder and exits 130 / 143). A
// terminal's Ctrl-C reaches it directly (same process group), so SIGINT is not passed on (a second
// one would make it exit before cleaning up); SIGTERM and SIGHUP sent to this launcher are.
process.on('SIGINT', () => {});
for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal !== null) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
