/** The systems the harness knows: one adapter process command line each. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AdapterSpec } from './driver.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Node flags for a TypeScript adapter process: tsx's loader, and the `remit-source` condition so
 * that 'remit' resolves to the library's sources in this repository (ts-shell/package.json).
 */
export const TSX_NODE_ARGS: readonly string[] = ['--conditions=remit-source', '--import', 'tsx'];

export interface SystemDef {
  id: string;
  label: string;
  /** Adapter entry file, relative to the repository root. */
  adapter: string;
  args: string[];
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

/** Why `def` cannot run in this environment (a server URL is missing), or null. */
export function whyNotRunnable(def: SystemDef, env: NodeJS.ProcessEnv = process.env): string | null {
  if (def.requiresEnv !== undefined && !env[def.requiresEnv]) {
    return `${def.requiresEnv} is not set (bash scripts/pg.sh start; export ${def.requiresEnv}="$(bash scripts/pg.sh url)")`;
  }
  return null;
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

export function adapterSpec(def: SystemDef): AdapterSpec {
  return {
    id: def.id,
    label: def.label,
    command: process.execPath,
    args: [...TSX_NODE_ARGS, path.join(REPO_ROOT, def.adapter), ...def.args],
  };
}
