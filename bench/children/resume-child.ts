/**
 * A fresh process for the resume suite and bench/resume-phases.ts. Usage (both run a
 * plain-JavaScript copy, see lib/compile-js.ts; under tsx it works the same, slower):
 *   node resume-child.js <remit|langgraph> <import|resume|phases> <db file> <N> [FULL|NORMAL] [resumes]
 * "import" loads the library, the workload module and better-sqlite3's JavaScript module, and exits
 * (the baseline every resume pays);
 * "resume" also opens the file with the given `PRAGMA synchronous` (default FULL), resumes the
 * parked run to its end, checks the result and prints {"resume_ms": ..., ...}: the time from
 * after the imports to the end, measured inside the child, and what the workload reports (the
 * synchronous setting read back from the connection, and REMIT's durable commits);
 * "phases" resumes `resumes` (default 3) copies of a parked run one after another in this one
 * process, `<db file>.0`, `<db file>.1`, …, made by the caller, and prints {"resumes": [...]}: each
 * resume's time and, for REMIT, the time of each of its phases (workloads/remit.ts, RESUME_PHASES).
 * The first resume runs cold code, the later ones code this process has run before.
 */

import { createRequire } from 'node:module';

const usage = 'usage: resume-child.ts <remit|langgraph> <import|resume|phases> <db file> <N> [FULL|NORMAL] [resumes]\n';
const [impl, mode, file, nodesArg, syncArg = 'FULL', resumesArg = '3'] = process.argv.slice(2);
const resumes = Number(resumesArg);
if ((impl !== 'remit' && impl !== 'langgraph') || (mode !== 'import' && mode !== 'resume' && mode !== 'phases') || !file || !nodesArg
  || (syncArg !== 'FULL' && syncArg !== 'NORMAL') || !Number.isInteger(resumes) || resumes < 1) {
  process.stderr.write(usage);
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
const importMs = performance.now() - importStart;

type PhaseTimes = Record<string, number>;

/** One resume of `db`; REMIT's phases timed when `phases` is given. */
function resumeOnce(db: string, phases?: PhaseTimes) {
  if (impl === 'langgraph') return (workload as typeof import('../workloads/langgraph.js')).langgraphResume(db, nodes, synchronous);
  let last = performance.now();
  const ended = (phase: string) => {
    const now = performance.now();
    if (phases) phases[`${phase}_ms`] = now - last;
    last = now;
  };
  return (workload as typeof import('../workloads/remit.js')).remitResume(db, nodes, synchronous, ended);
}

if (mode === 'resume') {
  const t0 = performance.now();
  const report = await resumeOnce(file);
  process.stdout.write(JSON.stringify({ import_ms: importMs, resume_ms: performance.now() - t0, ...report }) + '\n');
} else if (mode === 'phases') {
  const out: { resume_ms: number; phases?: PhaseTimes }[] = [];
  for (let i = 0; i < resumes; i++) {
    const phases: PhaseTimes = {};
    const t0 = performance.now();
    await resumeOnce(`${file}.${i}`, phases);
    out.push({ resume_ms: performance.now() - t0, ...(impl === 'remit' ? { phases } : {}) });
  }
  process.stdout.write(JSON.stringify({ import_ms: importMs, resumes: out }) + '\n');
} else {
  process.stdout.write(JSON.stringify({ import_ms: importMs, exports: Object.keys(workload).length }) + '\n');
}
