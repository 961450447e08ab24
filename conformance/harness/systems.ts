/**
 * The systems the harness knows: how to start one adapter process of each (a TypeScript file run
 * by Node, or a Python module run by a virtual environment's interpreter), its environment, and
 * how long it may take to start.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AdapterSpec } from './driver.js';
import { PYTHON_ADAPTERS_DIR, REPO_ROOT, venvPython, whyServerUnreachable, whyVenvUnavailable } from './availability.js';

export { REPO_ROOT };

/**
 * Node flags for a TypeScript adapter process: tsx's loader, and the `remit-source` condition so
 * that 'remit' resolves to the library's sources in this repository (ts-shell/package.json).
 */
export const TSX_NODE_ARGS: readonly string[] = ['--conditions=remit-source', '--import', 'tsx'];

export interface SystemDef {
  id: string;
  label: string;
  /** node: `adapter` is a TypeScript file relative to the repository root; python: a module run with `-m`. */
  runtime?: 'node' | 'python';
  /** python only: the virtual environment (.remit/venvs/<venv>, built from locks/<venv>.txt). */
  venv?: string;
  adapter: string;
  args: string[];
  /** Extra environment for the adapter; `stateDir` is a private folder of this system's campaign. */
  env?: (stateDir: string) => Record<string, string>;
  /** How long one adapter process may take to answer `hello` (imports); default 60 s. */
  startupMs?: number;
  /** How long one request may take; default REQUEST_TIMEOUT_MS of the runner. */
  requestTimeoutMs?: number;
  /** Part of the quick profile that `remit conformance` runs without --full. */
  quick: boolean;
  /** A test-only system that must show violations. */
  canary: boolean;
  /** Needs a server: runs only when this environment variable holds its URL. */
  requiresEnv?: string;
  /** May run the hosts column (its store is reachable over a network link). */
  hostsCapable?: boolean;
  /**
   * Runs only the generated-workflow campaign (harness/generated/): its missing guard shows only
   * on workflows whose schemas have transforms, which the reference workflow has not.
   */
  generatedOnly?: boolean;
}

const REMIT_ADAPTER = 'conformance/adapters/remit/adapter.ts';

export const SYSTEMS: readonly SystemDef[] = [
  { id: 'remit-sqlite-wasm', label: 'REMIT · SQLite · Wasm core', adapter: REMIT_ADAPTER, args: ['--store', 'sqlite', '--core', 'wasm'], quick: true, canary: false },
  { id: 'remit-sqlite-reference', label: 'REMIT · SQLite · reference core', adapter: REMIT_ADAPTER, args: ['--store', 'sqlite', '--core', 'reference'], quick: false, canary: false },
  { id: 'remit-memory-wasm', label: 'REMIT · memory · Wasm core', adapter: REMIT_ADAPTER, args: ['--store', 'memory', '--core', 'wasm'], quick: false, canary: false },
  { id: 'remit-memory-reference', label: 'REMIT · memory · reference core', adapter: REMIT_ADAPTER, args: ['--store', 'memory', '--core', 'reference'], quick: false, canary: false },
  {
    id: 'remit-postgres-wasm',
    label: 'REMIT · PostgreSQL · Wasm core',
    adapter: REMIT_ADAPTER,
    args: ['--store', 'postgres', '--core', 'wasm'],
    quick: false,
    canary: false,
    requiresEnv: 'REMIT_PG_URL',
    hostsCapable: true,
  },
  { id: 'langgraph-js', label: 'LangGraph.js · SQLite · durability sync', adapter: 'conformance/adapters/langgraph/adapter.ts', args: [], quick: true, canary: false },
  {
    id: 'langgraph-py',
    label: 'LangGraph (Python) · SQLite · durability sync',
    runtime: 'python',
    venv: 'langgraph-py',
    adapter: 'adapter_langgraph.adapter',
    args: ['--durability', 'sync'],
    quick: true,
    canary: false,
    startupMs: 30_000,
  },
  {
    id: 'langgraph-py-default-durability',
    label: 'LangGraph (Python) · SQLite · default durability',
    runtime: 'python',
    venv: 'langgraph-py',
    adapter: 'adapter_langgraph.adapter',
    args: ['--durability', 'default'],
    quick: false,
    canary: false,
    startupMs: 30_000,
  },
  {
    id: 'crewai',
    label: 'CrewAI Flows · SQLite @persist',
    runtime: 'python',
    venv: 'crewai',
    adapter: 'adapter_crewai.adapter',
    args: [],
    quick: true,
    canary: false,
    env: crewaiEnvironment,
    // `import crewai.flow` takes about 4 s of CPU; sixteen processes start at once in a cell.
    startupMs: 60_000,
    requestTimeoutMs: 90_000,
  },
  {
    id: 'pydantic-graph',
    label: 'pydantic-graph 1.x · file persistence',
    runtime: 'python',
    venv: 'pydantic-graph',
    adapter: 'adapter_pydantic_graph.adapter',
    args: [],
    quick: true,
    canary: false,
    startupMs: 30_000,
  },
  {
    id: 'canary',
    label: 'Canary · REMIT with the claim guard off',
    adapter: REMIT_ADAPTER,
    args: ['--store', 'sqlite', '--core', 'reference', '--canary', 'lost-append-reported-committed'],
    quick: false,
    canary: true,
  },
  {
    id: 'canary-transform',
    label: 'Canary · REMIT with stored values transformed again at every read',
    adapter: REMIT_ADAPTER,
    args: ['--store', 'sqlite', '--core', 'reference', '--canary', 'reapply-transform'],
    quick: false,
    canary: true,
    generatedOnly: true,
  },
  {
    id: 'canary-key',
    label: 'Canary · REMIT with the idempotency key ignored',
    adapter: REMIT_ADAPTER,
    args: ['--store', 'sqlite', '--core', 'reference', '--canary', 'unstable-effect-key'],
    quick: false,
    canary: true,
  },
];

/**
 * CrewAI stays quiet and off the network only when told: no telemetry, no version check, no
 * tracing, and its storage in an absolute private folder (a relative one lands in the working
 * directory), with a private HOME and a private TMPDIR: its named file locks
 * (`crewai_core.lock_store`, `crewai:<md5>.lock` in `tempfile.gettempdir()`) would otherwise
 * be left in the machine's temporary folder, about 150 per quick run. Every adapter process of
 * one system's campaign shares `stateDir`, so they still share those locks.
 */
function crewaiEnvironment(stateDir: string): Record<string, string> {
  const storage = path.join(stateDir, 'crewai-storage');
  const home = path.join(stateDir, 'home');
  const tmp = path.join(stateDir, 'tmp');
  fs.mkdirSync(storage, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(tmp, { recursive: true });
  return {
    TMPDIR: tmp,
    CREWAI_DISABLE_TELEMETRY: 'true',
    OTEL_SDK_DISABLED: 'true',
    CREWAI_DISABLE_VERSION_CHECK: 'true',
    CREWAI_TRACING_ENABLED: 'false',
    CREWAI_STORAGE_DIR: storage,
    HOME: home,
  };
}

/** Why `def` cannot run in this environment (a server URL or a virtual environment is missing), or null. */
export function whyNotRunnable(def: SystemDef, env: NodeJS.ProcessEnv = process.env): string | null {
  if (def.requiresEnv !== undefined && !env[def.requiresEnv]) {
    return `${def.requiresEnv} is not set (bash scripts/pg.sh start; export ${def.requiresEnv}="$(bash scripts/pg.sh url)")`;
  }
  if (def.runtime === 'python') {
    if (def.venv === undefined) throw new Error(`bug: Python system ${def.id} names no virtual environment`);
    return whyVenvUnavailable(def.venv, env);
  }
  return null;
}

/**
 * The systems of `defs` whose server (named by their `requiresEnv` URL) does not answer now, with
 * the reason; probed once per URL.
 */
export async function systemsWithServerDown(defs: readonly SystemDef[], env: NodeJS.ProcessEnv = process.env): Promise<{ system: string; reason: string }[]> {
  const probes = new Map<string, Promise<string | null>>();
  const out: { system: string; reason: string }[] = [];
  for (const def of defs) {
    const url = def.requiresEnv === undefined ? undefined : env[def.requiresEnv];
    if (url === undefined || url === '') continue;
    if (!probes.has(url)) probes.set(url, whyServerUnreachable(url));
    const reason = await probes.get(url)!;
    if (reason !== null) out.push({ system: def.id, reason: `${def.requiresEnv}: ${reason}` });
  }
  return out;
}

/** Systems that `--full` leaves out in this environment, with the reason. */
export function systemsNotRunnable(env: NodeJS.ProcessEnv = process.env): { system: string; reason: string }[] {
  return SYSTEMS.flatMap((s) => {
    const reason = whyNotRunnable(s, env);
    return reason === null ? [] : [{ system: s.id, reason }];
  });
}

export function findSystem(id: string): SystemDef {
  const def = SYSTEMS.find((s) => s.id === id);
  if (def === undefined) throw new Error(`unknown system "${id}"; known: ${SYSTEMS.map((s) => s.id).join(', ')}`);
  return def;
}

/** The command line of one adapter process; `stateDir` is a private folder of this system's campaign. */
export function adapterSpec(def: SystemDef, stateDir: string): AdapterSpec {
  const timing = {
    ...(def.startupMs === undefined ? {} : { startupMs: def.startupMs }),
    ...(def.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: def.requestTimeoutMs }),
  };
  const extraEnv = def.env?.(stateDir) ?? {};
  if (def.runtime === 'python') {
    if (def.venv === undefined) throw new Error(`bug: Python system ${def.id} names no virtual environment`);
    return {
      id: def.id,
      label: def.label,
      command: venvPython(def.venv),
      args: ['-m', def.adapter, ...def.args],
      env: { PYTHONPATH: PYTHON_ADAPTERS_DIR, PYTHONNOUSERSITE: '1', ...extraEnv },
      ...timing,
    };
  }
  return {
    id: def.id,
    label: def.label,
    command: process.execPath,
    args: [...TSX_NODE_ARGS, path.join(REPO_ROOT, def.adapter), ...def.args],
    ...(Object.keys(extraEnv).length === 0 ? {} : { env: extraEnv }),
    ...timing,
  };
}
