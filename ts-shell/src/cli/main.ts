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
import { EffectInFlightError, RemitError, setSuggestedCommandOptions, shellWord, suggestCommand } from '../errors.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';
import { DEFAULT_DB, globalOptions, suggestedCommandOptions, UsageError } from './context.js';
import { registerCommands } from './registry.js';

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
    .option('--create', 'create the database if it does not exist (only `run` does so without being asked)', false)
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

/**
 * What to do about an effect attempt in flight, as commands: wait for its lease (`continue
 * --wait`), or, when its owner crashed, continue under the owner's instance id, which takes its
 * attempts over at once. (`fork --continue` has no --wait: the fork is continued by `continue`.)
 */
export function inFlightAdvice(error: EffectInFlightError): string {
  const runId = error.runId ?? '<runId>';
  const continueWith = (option: string) => `${suggestCommand('continue')} ${option} ${runId.startsWith('-') ? '-- ' : ''}${shellWord(runId)}`;
  const wait = `wait for it: \`${continueWith('--wait <ms>')}\` waits up to <ms> milliseconds (its lease runs out in ${error.retryAfterMs} ms)`;
  if (error.owner === '') return `  ${wait}`;
  return `  ${wait}; or, if its owner ${error.owner} crashed, reuse that instance id: \`${continueWith(`--instance-id=${shellWord(error.owner)}`)}\` takes its attempts over at once (never while a process with that id may still be running)`;
}

/** Whether --json is among the options (not after `--`, where it would be an argument). */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/** The JSON form of a command line the CLI refused itself (docs/errors.md, "CLI exit codes"). */
function usageErrorJson(message: string): { name: string; code: string; message: string } {
  return { name: 'UsageError', code: 'CLI_USAGE', message };
}

/**
 * A reader that stops reading (`remit inspect big | head`) closes the pipe: the rest of the output
 * has nowhere to go, which is not an error of the command.
 */
function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(Number(process.exitCode ?? 0));
      throw error;
    });
  }
}

/** Run the CLI; resolves with the exit code (also set on process.exitCode). */
export async function runCli(argv: string[] = process.argv): Promise<number> {
  const json = wantsJson(argv);
  const usageMessages: string[] = [];
  const program = buildProgram(json ? (message) => usageMessages.push(message) : undefined);
  try {
    if (argv.length <= 2) {
      program.outputHelp();
      return (process.exitCode = ExitCode.USAGE);
    }
    await program.parseAsync(argv);
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
    const code = error instanceof UsageError ? ExitCode.USAGE : exitCodeFor(error);
    if (json) {
      const body =
        error instanceof RemitError ? error.toJSON()
        : error instanceof UsageError ? usageErrorJson(error.message)
        : { name: (error as Error)?.name, message: String((error as Error)?.message ?? error) };
      process.stdout.write(JSON.stringify({ error: body, exitCode: code }, null, 2) + '\n');
    } else {
      const name = error instanceof RemitError ? `${error.code}` : error instanceof UsageError ? 'usage' : (error as Error)?.name ?? 'error';
      // A message names runs, nodes and interrupts and carries handlers' messages: escaped (display.ts).
      process.stderr.write(`remit: ${name}: ${displayText(String((error as Error)?.message ?? error))}\n`);
      if (error instanceof EffectInFlightError) process.stderr.write(`${displayText(inFlightAdvice(error))}\n`);
      if (!(error instanceof RemitError) && !(error instanceof UsageError) && process.env['REMIT_DEBUG']) {
        process.stderr.write(`${String((error as Error)?.stack).split('\n').map(displayText).join('\n')}\n`);
      }
    }
    return (process.exitCode = code);
  } finally {
    setSuggestedCommandOptions();
  }
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

if (isEntryPoint()) {
  exitQuietlyOnClosedPipe();
  await runCli();
}
