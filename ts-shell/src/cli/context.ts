/**
 * What every CLI command shares: the global options, opening the store and the workflows, JSON
 * arguments, and printing. Commands stay thin: parse, call the library, print.
 */

import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import type { CoreKind } from '../core/index.js';
import { StoreNotFoundError } from '../errors.js';
import { createRemit, type Remit } from '../remit.js';
import { SqliteStore } from '../store/sqlite.js';
import type { Workflow } from '../workflow/workflow.js';

export const DEFAULT_DB = './.remit/remit.db';

export interface GlobalOptions {
  db: string;
  core: CoreKind;
  workflow?: string;
  json: boolean;
  synchronous: 'FULL' | 'NORMAL';
  instanceId?: string;
  /** Create the database when it does not exist (only `run` does so without being asked). */
  create?: boolean;
}

/** A bad command line: exit code 2 with a message saying what to type instead. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function globalOptions(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions;
}

/** The workflow module's exports, as the CLI uses them. */
export interface WorkflowModule {
  workflows: Workflow[];
  sampleInput?: unknown;
  path: string;
}

function isWorkflow(value: unknown): value is Workflow {
  const v = value as Partial<Workflow> | null;
  return !!v && typeof v === 'object' && typeof v.name === 'string' && v.nodes instanceof Map && v.fingerprint instanceof Uint8Array;
}

/** The workflow module named by --workflow, else by REMIT_WORKFLOW; undefined when neither is set. */
export function workflowModulePath(options: GlobalOptions): string | undefined {
  return options.workflow ?? process.env['REMIT_WORKFLOW'] ?? undefined;
}

const NO_WORKFLOW_MODULE =
  'this command drives runs, so it needs your workflows: pass --workflow <module> (or set REMIT_WORKFLOW), ' +
  'a JavaScript module exporting createWorkflows({ dataDir }), workflows, or a default workflow (docs/guide.md, "The CLI")';

export async function loadWorkflowModule(modulePath: string, dataDir: string): Promise<WorkflowModule> {
  const path = resolve(modulePath);
  if (!existsSync(path)) throw new UsageError(`--workflow ${modulePath}: no such file (${path})`);
  const mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  let exported: unknown;
  if (typeof mod['createWorkflows'] === 'function') exported = await (mod['createWorkflows'] as (c: { dataDir: string }) => unknown)({ dataDir });
  else exported = mod['workflows'] ?? mod['default'];
  const list = (Array.isArray(exported) ? exported : [exported]).filter(isWorkflow);
  if (list.length === 0) {
    throw new UsageError(`--workflow ${path}: the module exports no workflow (export createWorkflows(context), workflows, or a default workflow)`);
  }
  return { workflows: list, sampleInput: mod['sampleInput'], path };
}

export interface CliSession {
  remit: Remit;
  module: WorkflowModule;
  options: GlobalOptions;
  dbPath: string;
  close(): Promise<void>;
}

/**
 * Open the database and the workflow module. Commands that drive runs need the module
 * (`workflows: 'required'`); `inspect` and `runs` read logs and need none.
 */
export async function openSession(
  command: Command,
  needs: { workflows: 'required' | 'optional'; database?: 'create' | 'existing' },
): Promise<CliSession> {
  const options = globalOptions(command);
  const dbPath = resolve(options.db);
  const modulePath = workflowModulePath(options);
  if (modulePath === undefined && needs.workflows === 'required') throw new UsageError(NO_WORKFLOW_MODULE);
  // The store first: a --db that cannot be opened fails here, before the module makes side files.
  const store = openDatabase(dbPath, options, (needs.database ?? 'existing') === 'create' || options.create === true);
  let module: WorkflowModule;
  let remit: Remit;
  try {
    module = modulePath === undefined ? { workflows: [], path: '' } : await loadWorkflowModule(modulePath, dirname(dbPath));
    const instanceId = options.instanceId ?? process.env['REMIT_INSTANCE_ID'];
    remit = await createRemit({ store, workflows: module.workflows, core: options.core, ...(instanceId ? { instanceId } : {}) });
  } catch (error) {
    await store.close();
    throw error;
  }
  return { remit, module, options, dbPath, close: () => remit.close() };
}

/**
 * The SQLite database at `dbPath`. Only `run` creates one by default: for every other command a
 * missing file is an error (a mistyped --db must not silently create an empty database and print
 * "no runs"), unless --create asks for it.
 */
function openDatabase(dbPath: string, options: GlobalOptions, create: boolean): SqliteStore {
  try {
    return new SqliteStore(dbPath, { synchronous: options.synchronous, create });
  } catch (error) {
    if (error instanceof StoreNotFoundError) {
      throw new StoreNotFoundError(error.store, dbPath, `no such database file; pass the --db of an existing database, or --create to create an empty one there (docs/guide.md, "The CLI")`);
    }
    throw error;
  }
}

/** A JSON argument: inline JSON, or @path to read a file. */
export function parseJsonArgument(text: string, what: string): unknown {
  let source = text;
  if (text.startsWith('@')) {
    const path = resolve(text.slice(1));
    if (!existsSync(path)) throw new UsageError(`${what}: no such file ${path}`);
    try {
      source = readFileSync(path, 'utf8');
    } catch (error) {
      throw new UsageError(`${what}: cannot read ${path} (${(error as { code?: string }).code ?? (error as Error).message})`);
    }
  }
  try {
    return JSON.parse(source);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON (${(error as Error).message}); quote it for the shell, e.g. '{"approved":true}', or pass @file.json`);
  }
}

export function parseSeq(text: string, what: string): number {
  const seq = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(seq) || seq > 0xffff_ffff) {
    throw new UsageError(`${what} must be a sequence number (0, 1, 2, ... up to 4294967295), got ${JSON.stringify(text)}`);
  }
  return seq;
}

export function print(options: GlobalOptions, json: unknown, human: () => string): void {
  process.stdout.write((options.json ? JSON.stringify(json, null, 2) : human()) + '\n');
}
