/**
 * What every CLI command shares: the global options, opening the store and the workflows, JSON
 * arguments, and printing. Commands stay thin: parse, call the library, print.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import type { CoreKind } from '../core/index.js';
import { RemitError, shellWord, StoreError, StoreNotFoundError, type SuggestedCommandOptions } from '../errors.js';
import { checkInstanceId } from '../ids.js';
import { checkWorkflowsOption, createRemit, type Remit } from '../remit.js';
import { createSqliteFolder, SqliteStore } from '../store/sqlite.js';
import type { Workflow } from '../workflow/workflow.js';

export const DEFAULT_DB = './.remit/remit.db';

export interface GlobalOptions {
  db: string;
  core: CoreKind;
  workflow?: string;
  json: boolean;
  synchronous: 'FULL' | 'NORMAL';
  instanceId?: string;
  /** Create the database when it does not exist, and migrate one of an older REMIT layout (only `run` does either without being asked). */
  create?: boolean;
}

/**
 * Fields a command adds beside an error it throws, in its `--json` form (`{"error": ...,
 * ...fields, "exitCode": n}`): `fork --continue` failing after the fork was written adds
 * `forked` (the ForkResult).
 */
export const reportFields = new WeakMap<object, Record<string, unknown>>();

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

/**
 * The global options a command REMIT suggests must repeat to reach what this one reached: the
 * database, the core and durability when not the defaults, and the workflow module when given by
 * --workflow (REMIT_WORKFLOW is still set for the suggested command). Not --instance-id: a
 * suggested command is another process, and two processes must never share an instance id.
 */
export function suggestedCommandOptions(options: GlobalOptions): SuggestedCommandOptions {
  const always = [
    ...(options.db !== DEFAULT_DB ? [`--db=${options.db}`] : []),
    ...(options.core !== 'wasm' ? [`--core=${options.core}`] : []),
    ...(options.synchronous !== 'FULL' ? [`--synchronous=${options.synchronous}`] : []),
  ].map(shellWord);
  return { always, workflows: [workflowWord(options)].filter((word) => word !== '') };
}

/**
 * The --workflow a suggested command that drives runs needs: the one given; none when
 * REMIT_WORKFLOW names it; else a placeholder to fill in (a command that loads no module, such as
 * `fork` or `runs`, does not know it, and the suggestion would fail without it).
 */
function workflowWord(options: GlobalOptions): string {
  if (options.workflow !== undefined) return shellWord(`--workflow=${options.workflow}`);
  return workflowModulePath(options) !== undefined ? '' : `--workflow ${shellWord(MODULE_PLACEHOLDER)}`;
}

/**
 * The module a suggested command needs when the command that prints it does not know it. Printed
 * quoted (`'<module>'`): pasted unquoted, `<module>` would be a shell redirection; pasted as
 * printed, the command is refused with a message saying to fill it in (checkModuleFile).
 */
export const MODULE_PLACEHOLDER = '<module>';

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

/**
 * What a value exported in place of a workflow is, for the message: a builder (structurally: it
 * has build(), and may come from another copy of the package), else its type.
 */
function describeNonWorkflow(value: unknown): string {
  if (value === undefined) return 'undefined (is it imported and exported under that name?)';
  if (value === null) return 'null';
  if (typeof (value as { build?: unknown }).build === 'function') return 'a workflow builder, not a built workflow: call .build() on it';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object that is not a built workflow';
  return `a ${typeof value}, not a built workflow`;
}

/**
 * The workflow module named by --workflow, else (for a command that drives runs) by
 * REMIT_WORKFLOW; undefined when neither is set (an empty REMIT_WORKFLOW is unset). A command that
 * needs no module loads one only when --workflow names it, so a stale REMIT_WORKFLOW in the
 * environment cannot break `inspect`, `runs`, `repair` or `scrub`.
 */
export function workflowModulePath(options: GlobalOptions, needs: 'required' | 'optional' = 'required'): string | undefined {
  modulePathFromEnvironment = undefined;
  if (options.workflow !== undefined || needs === 'optional') return options.workflow;
  const fromEnvironment = process.env['REMIT_WORKFLOW'];
  if (fromEnvironment === undefined || fromEnvironment === '') return undefined;
  modulePathFromEnvironment = fromEnvironment;
  return fromEnvironment;
}

/** The module path of this command when REMIT_WORKFLOW gave it (no --workflow): its messages name the variable, not a flag never passed. */
let modulePathFromEnvironment: string | undefined;

/**
 * How the command line named `modulePath`, for a message about it: `--workflow m.mjs` or
 * `REMIT_WORKFLOW=m.mjs` (`shown`: the path as the message shows it, when not as given).
 */
function moduleNamed(modulePath: string, shown = modulePath): string {
  return `${modulePath === modulePathFromEnvironment ? 'REMIT_WORKFLOW=' : '--workflow '}${shown}`;
}

/** --workflow must name a file; checked before the database is opened (or created). */
function checkModuleFile(modulePath: string): string {
  if (modulePath === MODULE_PLACEHOLDER) {
    throw new UsageError(`${moduleNamed(modulePath)}: a placeholder in a suggested command: replace it with the path of your workflow module (docs/guide.md, "The CLI")`);
  }
  // An empty --workflow (an unset variable in --workflow "$MODULE") names no module: resolve('') would be the working folder.
  if (modulePath.trim() === '') throw new UsageError(`${moduleNamed(modulePath, shellWord(modulePath))}: an empty path; name your workflow module (a JavaScript file)`);
  const path = resolve(modulePath);
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`${moduleNamed(modulePath)}: ${code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file' : `cannot read it (${code})`} (${path})`);
  }
  if (!isFile) throw new UsageError(`${moduleNamed(modulePath)}: not a file (${path}); name the JavaScript module itself`);
  return path;
}

/**
 * Where a module that failed to load went wrong, for the message: a syntax error's file and line
 * (Node's ESM loader leaves them out of the error; `node --check` prints them), else the first
 * stack frame in a file.
 */
function failureLocation(error: unknown, path: string): string {
  if (error instanceof SyntaxError) {
    const check = spawnSync(process.execPath, ['--check', path], { encoding: 'utf8', timeout: 10_000 });
    const where = check.stderr?.split('\n').find((line) => line.trim() !== '');
    if (check.status !== 0 && where !== undefined) return ` at ${where.trim()}`;
  }
  const frame = (error as Error | undefined)?.stack?.split('\n').find((line) => /\bfile:\/\//.test(line));
  return frame === undefined ? '' : ` (${frame.trim()})`;
}

/** A value a workflow module threw that is not an Error, as JSON where it has one (it may have no string form at all). */
function describeThrownByModule(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/**
 * The step of loading the workflow module under way (`--workflow m.mjs: importing the module`), or
 * undefined: what the CLI says when the process runs out of work before the command finished
 * (main.ts, `whenStalled`), such as a module whose top-level await never settles.
 */
let moduleStepUnderWay: string | undefined;

/** The step of loading the workflow module under way, if any (see moduleStepUnderWay). */
export function workflowModuleStep(): string | undefined {
  return moduleStepUnderWay;
}

/** How long loading a workflow module may take (REMIT_MODULE_LOAD_TIMEOUT_MS; default a minute). */
const DEFAULT_MODULE_LOAD_TIMEOUT_MS = 60_000;

function moduleLoadTimeoutMs(): number {
  const given = process.env['REMIT_MODULE_LOAD_TIMEOUT_MS'];
  if (given === undefined || given === '') return DEFAULT_MODULE_LOAD_TIMEOUT_MS;
  return parseWholeNumber(given, 'REMIT_MODULE_LOAD_TIMEOUT_MS', 1, 0x7fff_ffff, `a whole number of milliseconds from 1 to ${0x7fff_ffff}`);
}

/**
 * `load()`, or a UsageError once it has taken `ms`: a module whose top-level await never settles
 * while something else keeps the process alive (a pool, a timer) would hang the command for
 * ever (with nothing else alive, main.ts's whenStalled reports it at once). The timer is unref'd:
 * it never keeps the process alive itself.
 */
async function withinLoadTimeout<T>(load: () => Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new UsageError(
      `${what} did not finish within ${ms} ms (REMIT_MODULE_LOAD_TIMEOUT_MS): a workflow module must finish loading (a connection or a promise it awaits that never settles?)`,
    )), ms);
    timer.unref();
  });
  try {
    return await Promise.race([load(), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Load the module; anything else it throws is the module's problem, reported as one (exit code 2). */
async function importModule<T>(modulePath: string, path: string, step: string, load: () => Promise<T>): Promise<T> {
  const timeoutMs = moduleLoadTimeoutMs();
  moduleStepUnderWay = `${moduleNamed(modulePath)}: ${step}`;
  try {
    return await withinLoadTimeout(load, timeoutMs, moduleStepUnderWay);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // REMIT's own typed errors (a definition build() refused) keep their code and exit code.
    if (error instanceof RemitError) throw error;
    const name = typeof (error as Error | undefined)?.name === 'string' ? (error as Error).name : 'a value';
    const message = typeof (error as Error | undefined)?.message === 'string' ? (error as Error).message : describeThrownByModule(error);
    throw new UsageError(`${moduleNamed(modulePath)}: ${step} threw ${name}: ${message}${failureLocation(error, path)}${typeScriptHint(error)}`);
  } finally {
    moduleStepUnderWay = undefined;
  }
}

/** For a TypeScript module that plain node cannot load: what to do instead. */
function typeScriptHint(error: unknown): string {
  if ((error as { code?: unknown } | undefined)?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') return '';
  return ' (the CLI loads JavaScript modules: compile the module to JavaScript, or run the CLI under a TypeScript loader, e.g. `node --import tsx node_modules/remit/dist/cli/main.js ...`)';
}

const NO_WORKFLOW_MODULE =
  'this command drives runs, so it needs your workflows: pass --workflow <module> (or set REMIT_WORKFLOW), ' +
  'a JavaScript module exporting createWorkflows({ dataDir }), workflows, or a default workflow (docs/guide.md, "The CLI")';

export async function loadWorkflowModule(modulePath: string, dataDir: string): Promise<WorkflowModule> {
  const path = checkModuleFile(modulePath);
  const mod = await importModule(modulePath, path, 'importing the module', async () => commonJsExports((await import(pathToFileURL(path).href)) as Record<string, unknown>));
  const create = mod['createWorkflows'];
  const exported =
    typeof create === 'function' ? await importModule(modulePath, path, 'createWorkflows()', async () => (create as (c: { dataDir: string }) => unknown)({ dataDir }))
    : mod['workflows'] ?? mod['default'];
  const what =
    typeof create === 'function' ? 'what createWorkflows() returned'
    : mod['workflows'] !== undefined && mod['workflows'] !== null ? 'the export `workflows`'
    : 'the default export';
  return { workflows: workflowList(exported, what, moduleNamed(modulePath, path)), sampleInput: mod['sampleInput'], path };
}

/**
 * The names a module exports. A CommonJS module's `module.exports = { workflows: [...] }` reaches
 * import() as its default export only (Node finds names statically, and not a property holding an
 * expression), and TypeScript's CommonJS output puts an `export default` one level further down
 * (`exports.default`, beside `exports.sampleInput`): the names are read from those objects, a
 * name found only further out (a `sampleInput` exported on its own) kept.
 */
function commonJsExports(imported: Record<string, unknown>): Record<string, unknown> {
  const exportsWorkflows = (names: Record<string, unknown>) => names['createWorkflows'] !== undefined || names['workflows'] !== undefined;
  if (exportsWorkflows(imported)) return imported;
  let outer = imported;
  let object = imported['default'];
  for (let level = 0; level < 2; level++) {
    if (object === null || typeof object !== 'object' || Array.isArray(object) || isWorkflow(object)) break;
    const names = { ...outer, ...(object as Record<string, unknown>) };
    if (exportsWorkflows(object as Record<string, unknown>)) return names;
    outer = names;
    object = (object as Record<string, unknown>)['default'];
  }
  return imported;
}

/**
 * The workflows a module exports: one built workflow, or an array of them. Anything else is
 * refused, naming the entry, as createRemit refuses it (an entry that is not a workflow is never
 * dropped, so that `run --name` cannot then say the module has no such workflow): a builder
 * (`.build()` forgotten), an object in place of the array, a missing import.
 */
function workflowList(exported: unknown, what: string, named: string): Workflow[] {
  const refuse = (problem: string) => new UsageError(`${named}: ${problem}`);
  if (exported === undefined) throw refuse('the module exports no workflow (export createWorkflows(context), workflows, or a default workflow)');
  if (isWorkflow(exported)) return [exported];
  if (!Array.isArray(exported)) {
    if (exported !== null && typeof exported === 'object' && typeof (exported as { build?: unknown }).build !== 'function') {
      const keys = Object.keys(exported);
      throw refuse(`${what} is an object, not an array of workflows: export an array${keys.length > 0 ? `, e.g. [${keys.join(', ')}]` : ''}`);
    }
    throw refuse(`${what} is ${describeNonWorkflow(exported)}`);
  }
  if (exported.length === 0) throw refuse(`${what} is an empty array: the module exports no workflow`);
  // An index loop: a hole of a sparse array is an entry that is not a workflow too.
  for (let index = 0; index < exported.length; index++) {
    if (!isWorkflow(exported[index])) throw refuse(`${what}, entry ${index}: ${describeNonWorkflow(exported[index])}`);
  }
  return exported as Workflow[];
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
 * (`workflows: 'required'`); `inspect` and `runs` read logs and need none. `check` sees the loaded
 * module before anything is written: a database this command creates is created only after it
 * passed (so a `run` refused for its module, its --name or its input leaves no database behind,
 * and a database is never deleted: another process may have opened it meanwhile).
 */
export async function openSession(
  command: Command,
  needs: { workflows: 'required' | 'optional'; database?: 'create' | 'existing'; check?: (module: WorkflowModule) => void },
): Promise<CliSession> {
  const options = globalOptions(command);
  // An empty --db (an unset shell variable: --db "$DB") would name the working folder.
  if (options.db.trim() === '') throw new UsageError(`--db ${shellWord(options.db)}: an empty path; name the database file (default ${DEFAULT_DB})`);
  const dbPath = resolve(options.db);
  checkNotFolder(dbPath);
  const modulePath = workflowModulePath(options, needs.workflows);
  if (modulePath === undefined && needs.workflows === 'required') throw new UsageError(NO_WORKFLOW_MODULE);
  // A module that does not exist fails before the database is opened (or created).
  if (modulePath !== undefined) checkModuleFile(modulePath);
  const mayCreate = (needs.database ?? 'existing') === 'create' || options.create === true;
  const creating = mayCreate && !existsSync(dbPath);
  // The instance id is checked before anything is created, as every other option.
  const instanceId = options.instanceId ?? (process.env['REMIT_INSTANCE_ID'] || undefined);
  if (instanceId !== undefined) checkInstanceId(instanceId);
  // An existing store first: a --db that cannot be opened fails before the module makes side files
  // (a command that may create one also adds REMIT's tables to an existing file that has none).
  // A new one last: after the module loaded and the command's check passed.
  const existing = creating ? undefined : openDatabase(dbPath, options, mayCreate);
  // The module gets the database's folder as its dataDir: made first, so that a --db whose folder
  // cannot be made fails as a store error naming it, before the module tries to use it.
  if (creating) createSqliteFolder(dbPath);
  let module: WorkflowModule;
  try {
    module = modulePath === undefined ? { workflows: [], path: '' } : await loadWorkflowModule(modulePath, dirname(dbPath));
    // What createRemit would refuse (two definitions of one name) is refused before a database is made.
    checkWorkflowsOption(module.workflows);
    needs.check?.(module);
  } catch (error) {
    await existing?.close();
    throw error;
  }
  const store = existing ?? openDatabase(dbPath, options, true);
  try {
    // An empty --instance-id is refused (checkInstanceId, above); an empty REMIT_INSTANCE_ID is unset.
    const remit = await createRemit({ store, workflows: module.workflows, core: options.core, ...(instanceId !== undefined ? { instanceId } : {}) });
    return { remit, module, options, dbPath, close: () => remit.close() };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * A --db that names a folder is refused as what it is, before anything is opened (SQLite would
 * say `disk I/O error`, or `unable to open database file`): a store error naming the path (exit
 * code 8, as any --db that cannot be opened), code EISDIR.
 */
function checkNotFolder(dbPath: string): void {
  let folder = false;
  try {
    folder = statSync(dbPath).isDirectory();
  } catch {
    // Not there, or not readable: opening it says which.
  }
  if (!folder) return;
  const problem = new Error(`it is a folder, not a database file: name the file, e.g. --db ${shellWord(join(dbPath, 'remit.db'))}`);
  throw new StoreError(`sqlite:${dbPath}`, 'open', 'EISDIR', {}, problem);
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
    if (error instanceof StoreNotFoundError && !existsSync(dbPath)) {
      throw new StoreNotFoundError(error.store, dbPath, `no such database file; pass the --db of an existing database, or --create to create an empty one there (docs/guide.md, "The CLI")`);
    }
    throw error;
  }
}

/** A JSON argument: inline JSON, or @path to read a file. */
export function parseJsonArgument(text: string, what: string): unknown {
  let source = text;
  if (text.startsWith('@')) {
    // A bare @ (an unset variable in @"$FILE") names no file: resolve('') would be the working folder.
    if (text.slice(1).trim() === '') throw new UsageError(`${what}: an empty path after @; name the file, e.g. @value.json`);
    const path = resolve(text.slice(1));
    // A device (@/dev/zero, @/dev/urandom) would be read without end. A pipe ends (@/dev/stdin with
    // a value piped in, a shell's process substitution): it is read as a file is. A path that cannot
    // be stat'ed is no such file, as existsSync, which this one stat replaces, said.
    let kind: Stats;
    try {
      kind = statSync(path);
    } catch {
      throw new UsageError(`${what}: no such file ${path}`);
    }
    if (!kind.isFile() && !kind.isFIFO() && !kind.isSocket()) {
      throw new UsageError(`${what}: ${path} is not a regular file or a pipe (a device is read without end); name a file holding the JSON value`);
    }
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

/** `text` as a number if it is only decimal digits naming one from `min` to `max`, else a UsageError saying it must be `described`. */
function parseWholeNumber(text: string, what: string, min: number, max: number, described: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${what} must be ${described}, got ${JSON.stringify(text)}`);
  return n;
}

/** A whole number of milliseconds (0 to 86,400,000, REMIT's limit for waits). */
export function parseMilliseconds(text: string, what: string): number {
  return parseWholeNumber(text, what, 0, 86_400_000, 'a whole number of milliseconds from 0 to 86400000');
}

export function parseLimit(text: string, what: string): number {
  return parseWholeNumber(text, what, 1, Number.MAX_SAFE_INTEGER, 'a whole number from 1');
}

export function parseSeq(text: string, what: string): number {
  return parseWholeNumber(text, what, 0, 0xffff_ffff, 'a sequence number (0, 1, 2, ... up to 4294967295)');
}

export function print(options: GlobalOptions, json: unknown, human: () => string): void {
  process.stdout.write((options.json ? JSON.stringify(json, null, 2) : human()) + '\n');
}
