/**
 * Whether a system's runtime is present on this machine. Python adapters run in virtual
 * environments that scripts/python-venvs.sh builds from committed lock files into .remit/venvs/;
 * a missing or stale environment makes its system "NOT RUN <system>: <reason>", never silent.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Where the Python adapters' shared package and adapter packages live (their PYTHONPATH). */
export const PYTHON_ADAPTERS_DIR = path.join(REPO_ROOT, 'conformance/adapters/python');
export const PYTHON_LOCKS_DIR = path.join(PYTHON_ADAPTERS_DIR, 'locks');
export const VENV_ROOT = path.join(REPO_ROOT, '.remit/venvs');
const BUILD_COMMAND = 'bash scripts/python-venvs.sh';

export function venvPython(venv: string): string {
  return path.join(VENV_ROOT, venv, 'bin', 'python');
}

/** Why the virtual environment `venv` cannot run an adapter now, or null when it can. */
export function whyVenvUnavailable(venv: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.REMIT_SKIP_PYTHON === '1') return 'REMIT_SKIP_PYTHON=1 is set (the Python adapters are skipped on request)';
  const lock = path.join(PYTHON_LOCKS_DIR, `${venv}.txt`);
  if (!fs.existsSync(lock)) throw new Error(`bug: no lock file ${path.relative(REPO_ROOT, lock)} for the virtual environment ${venv}`);
  const dir = path.join(VENV_ROOT, venv);
  const failure = path.join(VENV_ROOT, `${venv}.unavailable`);
  if (!fs.existsSync(venvPython(venv))) {
    if (fs.existsSync(failure)) return `its virtual environment could not be built: ${fs.readFileSync(failure, 'utf8').trim()}`;
    return `its virtual environment .remit/venvs/${venv} is not built (${BUILD_COMMAND})`;
  }
  const stamp = path.join(dir, '.remit-stamp');
  const lockHash = crypto.createHash('sha256').update(fs.readFileSync(lock)).digest('hex');
  const recorded = fs.existsSync(stamp) ? fs.readFileSync(stamp, 'utf8').trim().split(' ')[0] : '';
  if (recorded !== lockHash) return `its virtual environment .remit/venvs/${venv} is out of date with ${path.relative(REPO_ROOT, lock)} (${BUILD_COMMAND})`;
  return null;
}

/**
 * Why the PostgreSQL server at `url` cannot serve a system now (one connection and `SELECT 1`, at
 * most `timeoutMs`), or null when it answers. A server that is down must make its system NOT RUN:
 * run against it, every cell's store fails, and each run would be judged a contract violation.
 * The reason is pg's message, which names the host and port, never the password.
 */
export async function whyServerUnreachable(url: string, timeoutMs = 5000): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return `the PostgreSQL server at its URL did not answer: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    await client.end().catch(() => {});
  }
}
