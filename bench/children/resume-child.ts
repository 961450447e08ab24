/**
 * A fresh process for the resume suite. Usage (the suite runs a plain-JavaScript copy, see
 * lib/compile-js.ts; under tsx it works the same, slower):
 *   node resume-child.js <remit|langgraph> <import|resume> <db file> <N> [FULL|NORMAL]
 * "import" loads the library, the workload module and better-sqlite3's JavaScript module, and exits
 * (the baseline every resume pays);
 * "resume" also opens the file with the given `PRAGMA synchronous` (default FULL), resumes the
 * parked run to its end, checks the result and prints {"resume_ms": ..., ...}: the time from
 * after the imports to the end, measured inside the child, and what the workload reports (the
 * synchronous setting read back from the connection, and REMIT's durable commits).
 */

import { createRequire } from 'node:module';

const [impl, mode, file, nodesArg, syncArg = 'FULL'] = process.argv.slice(2);
if ((impl !== 'remit' && impl !== 'langgraph') || (mode !== 'import' && mode !== 'resume') || !file || !nodesArg
  || (syncArg !== 'FULL' && syncArg !== 'NORMAL')) {
  process.stderr.write('usage: resume-child.ts <remit|langgraph> <import|resume> <db file> <N> [FULL|NORMAL]\n');
  process.exit(2);
}
const synchronous = syncArg as 'FULL' | 'NORMAL';
const nodes = Number(nodesArg);
const importStart = performance.now();
const workload = impl === 'remit' ? await import('../workloads/remit.js') : await import('../workloads/langgraph.js');
// Both libraries store through better-sqlite3. LangGraph's workload imports it at the top (so its
// load falls in the import phase); REMIT's shell loads it when the first SQLite store opens. The
// module is loaded here for both, so the timed resume of neither includes loading it (opening
// the database, which loads the native addon, stays inside the timed part for both).
createRequire(import.meta.url)('better-sqlite3');
if (mode === 'resume') {
  const t0 = performance.now();
  const report = impl === 'remit'
    ? await (workload as typeof import('../workloads/remit.js')).remitResume(file, nodes, synchronous)
    : await (workload as typeof import('../workloads/langgraph.js')).langgraphResume(file, nodes, synchronous);
  process.stdout.write(JSON.stringify({ import_ms: t0 - importStart, resume_ms: performance.now() - t0, ...report }) + '\n');
} else {
  process.stdout.write(JSON.stringify({ import_ms: performance.now() - importStart, exports: Object.keys(workload).length }) + '\n');
}
