#!/usr/bin/env node
/**
 * The `remit` command line (commander). Commands live in ./commands, one file each, registered by
 * ./registry.ts. Exit codes: docs/errors.md (0 ok, 2 usage, 3 not found, 4 refused, ...).
 */

import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { displayText } from '../display.js';
import { EffectInFlightError, ForkTargetExistsError, ImplicitForkError, NotACheckpointError, ORDINARY_SKEW_MS, RemitError, setSuggestedCommandOptions, shellWord, suggestCommand } from '../errors.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';
import { DEFAULT_DB, globalOptions, reportFields, suggestedCommandOptions, UsageError, workflowModuleStep } from './context.js';
import { registerCommands } from './registry.js';
import { stalledError, StalledError } from './stalled.js';

/** The package's version, from its package.json (two folders up from src/cli and dist/cli). */
function packageVersion(): string {
  try {
    return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * Commander's own complaint (`error: unknown command 'x'`, with a suggestion on a line of its own)
 * as the message of REMIT's one-line form: without commander's `error: `, on one line.
 */
export function usageMessage(text: string): string {
  return text.trim().replace(/^error: /, '').split('\n').map((line) => line.trim()).filter((line) => line !== '').join(' ');
}

/**
 * The program. `reportUsageError` receives commander's own complaints (unknown option, missing
 * argument, as usageMessage) instead of stderr, and then nothing is written to stderr (not the help
 * hint either), so that --json can print them as JSON on stdout. Without it, a complaint is
 * `remit: usage: <message>` on stderr, like every other error, and the hint follows on its own line.
 */
export function buildProgram(reportUsageError?: (message: string) => void): Command {
  const program = new Command('remit')
    .description('durable workflows for Node: run, crash, resume, fork, inspect')
    .version(packageVersion(), '-V, --version', 'print the version of the remit package')
    .option('--db <path>', 'SQLite database file', DEFAULT_DB)
    .option('--create', 'create the database if it does not exist, and migrate one of an older REMIT layout (only `run` does either without being asked)', false)
    .addOption(new Option('--core <kind>', 'recovery core').choices(['wasm', 'reference']).default('wasm'))
    .option('--workflow <module>', 'workflow module (JavaScript; or set REMIT_WORKFLOW): exports createWorkflows({ dataDir }), workflows, or a default workflow')
    .addOption(new Option('--synchronous <mode>', 'SQLite durability: FULL survives power loss, NORMAL process crashes').choices(['FULL', 'NORMAL']).default('FULL'))
    .option('--instance-id <id>', 'this sequencer\'s instance id, the owner of the effect attempts it claims (or set REMIT_INSTANCE_ID); reuse it after a crash to take over its own attempts at once; never run two processes with one id')
    .option('--json', 'print JSON instead of text', false)
    .showHelpAfterError('(add --help for usage)')
    .showSuggestionAfterError(true)
    .exitOverride();
  // Commander's own complaints quote the command line: escaped (display.ts), as every other message.
  program.configureOutput(
    reportUsageError !== undefined
      ? { outputError: (text) => reportUsageError(usageMessage(text)), writeErr: () => {} }
      : { outputError: (text, write) => write(`remit: usage: ${displayText(usageMessage(text))}\n`) },
  );
  // The commands this one suggests (in its output and in its errors' advice) carry its --db and --workflow.
  program.hook('preAction', (_program, action) => setSuggestedCommandOptions(suggestedCommandOptions(globalOptions(action))));
  return registerCommands(program);
}

/** The longest `continue --wait` (parseMilliseconds in context.ts). */
const MAX_WAIT_MS = 86_400_000;

/**
 * What to do about an effect attempt in flight, as commands: wait for its lease (`continue
 * --wait`), or, when its owner crashed, continue under the owner's instance id, which takes its
 * attempts over at once. (`fork --continue` has no --wait: the fork is continued by `continue`.)
 */
export function inFlightAdvice(error: EffectInFlightError): string {
  const runId = error.runId ?? '<runId>';
  const continueWith = (option: string) => `${suggestCommand('continue')} ${option} ${runId.startsWith('-') ? '-- ' : ''}${shellWord(runId)}`;
  const remainingMs = leaseRemainingMs(error);
  const waitMs = Math.min(remainingMs, MAX_WAIT_MS);
  const poll = error.runningHere ? `a call in this process was running it (retryAfterMs ${error.retryAfterMs} is a poll interval, not the lease's remaining time); ` : '';
  // A lease that ends past the longest --wait was stamped by a clock ahead of this one (or this one is behind): no wait reaches its end.
  const skewed = remainingMs > MAX_WAIT_MS + ORDINARY_SKEW_MS ? ': the owner\'s clock was ahead of this one, or this one is behind' : '';
  const until = remainingMs > MAX_WAIT_MS
    ? `the longest --wait; its lease runs out later than that (in ${remainingMs} ms by this host's clock${skewed})`
    : 'until its lease runs out';
  const wait = `${poll}wait for it: \`${continueWith(`--wait ${waitMs}`)}\` waits up to ${waitMs} ms, ${until}`;
  if (error.owner === '') return `  ${wait}`;
  // A worker thread's or cluster worker's owner (`<id>#thread-N`, `<id>#worker-N`) cannot be taken as an instance id ('#' is refused:
  // it is how a worker's calls are told from the main thread's): waiting is the way.
  if (error.owner.includes('#')) return `  ${wait}; its owner ${error.owner} is a worker thread's or cluster worker's instance, whose id cannot be reused from here`;
  return `  ${wait}; or, if its owner ${error.owner} crashed, reuse that instance id: \`${continueWith(`--instance-id=${shellWord(error.owner)}`)}\` takes its attempts over at once (never while a process with that id may still be running)`;
}

/**
 * The lease's remaining time (at least 1 ms; --wait takes at most MAX_WAIT_MS of it): retryAfterMs,
 * except when a call in this process runs the attempt, where retryAfterMs is a poll interval and
 * the lease says how long.
 */
function leaseRemainingMs(error: EffectInFlightError): number {
  const remaining = error.runningHere ? error.leaseExpiresAtMs - Date.now() : Number(error.retryAfterMs);
  return Math.max(1, Math.ceil(remaining || 1));
}

/**
 * What to do about a continue from before the head: fork at that checkpoint (the command), or,
 * when it is not one, find a checkpoint (`remit inspect`).
 */
export function implicitForkAdvice(error: ImplicitForkError): string {
  const runId = error.runId ?? '<runId>';
  if (!error.requestedIsCheckpoint) return `  find a checkpoint before the head: \`${suggestCommand('inspect', runId)}\` lists the records (RUN_STARTED and NODE_COMPLETED are checkpoints)`;
  return `  fork it there: \`${suggestCommand('fork', runId, String(error.requestedSeq))}\` makes a new run from that checkpoint (the run itself is left as it is) and prints the command that continues it`;
}

/** The advice line printed after an error's own line (human output), if it has one. */
function adviceFor(error: unknown): string | undefined {
  if (error instanceof EffectInFlightError) return inFlightAdvice(error);
  if (error instanceof ImplicitForkError) return implicitForkAdvice(error);
  if (error instanceof NotACheckpointError) {
    return `  find a checkpoint: \`${suggestCommand('inspect', error.runId ?? '<runId>')}\` lists the records (RUN_STARTED and NODE_COMPLETED are checkpoints)`;
  }
  if (error instanceof ForkTargetExistsError) {
    return `  name another new run with --run-id, or leave it out for a fresh id; \`${suggestCommand('inspect', error.targetRunId)}\` shows the run that has this one`;
  }
  return undefined;
}

/** What the command line asks for, read before commander parses it (scanCommandLine). */
interface CommandLineScan {
  /** --json is one of the program's options (not an option's value, not after `--`). */
  json: boolean;
  /** No command (and no --help or --version): only global options, or nothing at all. */
  noCommand: boolean;
  /** An option that takes a value, followed by a word that is an option of the CLI instead. */
  missingValue?: { flags: string; long: string | undefined; next: string };
  /** The words that are neither options nor their values: the command and its arguments. */
  operands: string[];
}

/**
 * Read the command line as commander will, for what must be known before it parses: whether the
 * output is JSON, whether a command was given, and whether an option that takes a value is
 * followed by one of the CLI's options (`--run-id --json`, `--db --json`). Commander would take
 * that word as the value of a global option (the database `--json`) but not of a command's option
 * (whose value is then missing and `--json` the global flag): both are refused instead, as a
 * missing value, so that `--json` means one thing wherever it is. A value that is an option's name
 * is given as `--run-id=--json`.
 */
function scanCommandLine(program: Command, args: readonly string[]): CommandLineScan {
  const all = [program, ...program.commands].flatMap((command) => command.options);
  const byFlag = new Map<string, Option>();
  for (const option of all) for (const flag of [option.short, option.long]) if (flag !== undefined) byFlag.set(flag, option);
  const isOptionWord = (word: string) =>
    word === '--' || word === '-h' || word === '--help' || byFlag.has(word) || (/^--[^=]+=/.test(word) && byFlag.has(word.slice(0, word.indexOf('='))));
  const programOptions = new Set(program.options);
  const scan: CommandLineScan = { json: false, noCommand: true, operands: [] };
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    if (word === '--') {
      if (i + 1 < args.length) scan.noCommand = false;
      scan.operands.push(...args.slice(i + 1));
      break;
    }
    if (!word.startsWith('-') || word === '-') scan.operands.push(word);
    const option = byFlag.get(word);
    // `--db=x.db`: a global option and its value in one word.
    const inline = /^--[^=]+=/.test(word) ? byFlag.get(word.slice(0, word.indexOf('='))) : undefined;
    const global = option ?? (inline?.required ? inline : undefined);
    // Anything but a global option (a command, --help, --version, a command's option) is not "no command".
    if (global === undefined || !programOptions.has(global) || global.long === '--version') scan.noCommand = false;
    if (option === undefined) continue;
    if (option.long === '--json') scan.json = true;
    if (!option.required) continue;
    const next = args[i + 1];
    if (next !== undefined && isOptionWord(next)) {
      scan.missingValue ??= { flags: option.flags, long: option.long, next };
      continue;
    }
    i++;
  }
  return scan;
}

/** The JSON form of a command line the CLI refused itself (docs/errors.md, "CLI exit codes"). */
function usageErrorJson(message: string): { name: string; code: string; message: string } {
  return { name: 'UsageError', code: 'CLI_USAGE', message };
}

/**
 * A reader that stops reading (`remit inspect big | head`) closes the pipe: the rest of the output
 * has nowhere to go, which is not an error of the command. Any other failure to write the output (a
 * full disk behind `> file`, a descriptor open only for reading) is said in one line on stderr, CLI_OUTPUT, exit
 * code 1, never as a stack trace: the command's work was done or not as it would have been, and
 * only its report is lost (a resume that committed stays committed), so the line says so.
 */
function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(Number(process.exitCode ?? 0));
      if (stream === process.stdout) {
        const line = `remit: CLI_OUTPUT: could not write the command's output to standard output (${error.code ?? error.name}: ${error.message}); `
          + `what the command did stands, only its output is lost: see where the runs stand with \`${suggestCommand('runs')}\` before repeating a command that writes\n`;
        process.stderr.write(line, () => process.exit(ExitCode.UNEXPECTED));
        return;
      }
      process.exit(ExitCode.UNEXPECTED); // stderr itself cannot be written: nothing left to say it with
    });
  }
}

/**
 * Refusals of the command line found by scanCommandLine, as commander's own (through
 * `program.error`: the same `remit: usage:` line and hint, or JSON): no command, a `help` for a
 * command that does not exist, an option whose value is missing because an option follows it.
 */
function refuseScanned(program: Command, scan: CommandLineScan): void {
  const usage = (message: string, code: string) => program.error(`error: ${message}`, { exitCode: ExitCode.USAGE, code });
  if (scan.noCommand) usage(`no command given; commands: ${program.commands.map((command) => command.name()).join(', ')}`, 'remit.missingCommand');
  const [first, second] = scan.operands;
  if (first === 'help' && second !== undefined && !program.commands.some((command) => command.name() === second || command.aliases().includes(second))) {
    usage(`unknown command '${second}' (help takes a command: ${program.commands.map((command) => command.name()).join(', ')})`, 'commander.unknownCommand');
  }
  const missing = scan.missingValue;
  if (missing !== undefined) {
    const spelled = missing.long ?? missing.flags;
    usage(`option '${missing.flags}' argument missing: the next word, ${missing.next}, is an option (to give it as the value, write ${spelled}=${missing.next})`, 'commander.optionMissingArgument');
  }
}

/**
 * A command that has not finished when the process runs out of work (Node's 'beforeExit': nothing
 * is left to run, and whatever it awaits can never settle) would end the process silently, with
 * Node's exit code 13 for an unsettled top-level await. It is reported instead: a workflow module
 * whose top-level await (or createWorkflows() promise) never settles as the usage error of a module
 * that does not load (exit code 2); anything else, such as node code returning a promise that never
 * settles, as an unexpected error (exit code 1) naming the run the command drove (stalled.ts).
 */
function whenStalled(): { stalled: Promise<never>; stop(): void } {
  let drains = 0;
  let fail: (error: unknown) => void = () => {};
  const stalled = new Promise<never>((_resolve, reject) => {
    fail = reject;
  });
  // The first drain reads the stalled run's head; a second one means that read never settles either.
  const onDrained = () => void stallError(drains++ === 0).then(fail, fail);
  process.on('beforeExit', onDrained);
  return { stalled, stop: () => process.off('beforeExit', onDrained) };
}

async function stallError(readHead: boolean): Promise<Error> {
  const step = workflowModuleStep();
  if (step !== undefined) {
    const what = step.endsWith('createWorkflows()') ? 'the promise it returned never settles' : 'its top-level await waits for a promise that never settles';
    return new UsageError(`${step} never finished: ${what}, and nothing is left to run (a workflow module must finish loading)`);
  }
  return stalledError(readHead);
}

/** Print a failed command's error: JSON on stdout with --json, else a line (and its advice) on stderr. */
function reportError(error: unknown, json: boolean): number {
  const code = error instanceof UsageError ? ExitCode.USAGE : exitCodeFor(error);
  if (json) {
    const body =
      error instanceof RemitError || error instanceof StalledError ? error.toJSON()
      : error instanceof UsageError ? usageErrorJson(error.message)
      : { name: (error as Error)?.name, message: String((error as Error)?.message ?? error) };
    const fields = error !== null && typeof error === 'object' ? reportFields.get(error) : undefined;
    process.stdout.write(JSON.stringify({ error: body, ...fields, exitCode: code }, null, 2) + '\n');
  } else {
    const name = error instanceof RemitError || error instanceof StalledError ? `${error.code}` : error instanceof UsageError ? 'usage' : (error as Error)?.name ?? 'error';
    // A message names runs, nodes and interrupts and carries handlers' messages: escaped (display.ts).
    process.stderr.write(`remit: ${name}: ${displayText(String((error as Error)?.message ?? error))}\n`);
    const advice = adviceFor(error);
    if (advice !== undefined) process.stderr.write(`${displayText(advice)}\n`);
    if (!(error instanceof RemitError) && !(error instanceof UsageError) && process.env['REMIT_DEBUG']) {
      process.stderr.write(`${String((error as Error)?.stack).split('\n').map(displayText).join('\n')}\n`);
    }
  }
  return code;
}

/** Run the CLI; resolves with the exit code (also set on process.exitCode). */
export async function runCli(argv: string[] = process.argv): Promise<number> {
  const scan = scanCommandLine(buildProgram(), argv.slice(2));
  const json = scan.json;
  const usageMessages: string[] = [];
  const program = buildProgram(json ? (message) => usageMessages.push(message) : undefined);
  const stall = whenStalled();
  try {
    refuseScanned(program, scan);
    await Promise.race([program.parseAsync(argv), stall.stalled]);
    return (process.exitCode = Number(process.exitCode ?? 0));
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are "errors" to commander; their exit code is 0.
      if (error.exitCode === 0) return (process.exitCode = 0);
      if (json) {
        const message = usageMessages.filter((m) => m !== '').join(' ') || usageMessage(error.message);
        process.stdout.write(JSON.stringify({ error: usageErrorJson(message), exitCode: ExitCode.USAGE }, null, 2) + '\n');
      }
      return (process.exitCode = ExitCode.USAGE);
    }
    return (process.exitCode = reportError(error, json));
  } finally {
    stall.stop();
    setSuggestedCommandOptions();
  }
}

/** Resolves once everything written to `stream` so far has been handed to the system. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  return new Promise((resolve) => stream.write('', () => resolve()));
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

/**
 * As the `remit` bin: run the command, then end the process with its exit code once its output is
 * written, whatever the workflow module left running (a database pool, a timer, an HTTP agent
 * keeping the event loop alive): the command is done when it has printed its result.
 */
if (isEntryPoint()) {
  exitQuietlyOnClosedPipe();
  const code = await runCli();
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}
