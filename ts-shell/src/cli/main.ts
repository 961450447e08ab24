#!/usr/bin/env node
/**
 * The `remit` command line (commander). Commands live in ./commands, one file each, registered by
 * ./registry.ts. Exit codes: docs/errors.md (0 ok, 2 usage, 3 not found, 4 refused, ...).
 */

import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { RemitError } from '../errors.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';
import { DEFAULT_DB, UsageError } from './context.js';
import { registerCommands } from './registry.js';

export function buildProgram(): Command {
  const program = new Command('remit')
    .description('durable workflows for Node: run, crash, resume, fork, inspect')
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
  return registerCommands(program);
}

/** Run the CLI; resolves with the exit code (also set on process.exitCode). */
export async function runCli(argv: string[] = process.argv): Promise<number> {
  const program = buildProgram();
  const json = argv.includes('--json');
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
      return (process.exitCode = error.exitCode === 0 ? 0 : ExitCode.USAGE);
    }
    const code = error instanceof UsageError ? ExitCode.USAGE : exitCodeFor(error);
    if (json) {
      const body = error instanceof RemitError ? error.toJSON() : { name: (error as Error)?.name, message: String((error as Error)?.message ?? error) };
      process.stdout.write(JSON.stringify({ error: body, exitCode: code }, null, 2) + '\n');
    } else {
      const name = error instanceof RemitError ? `${error.code}` : error instanceof UsageError ? 'usage' : (error as Error)?.name ?? 'error';
      process.stderr.write(`remit: ${name}: ${(error as Error)?.message ?? String(error)}\n`);
      if (!(error instanceof RemitError) && !(error instanceof UsageError) && process.env['REMIT_DEBUG']) {
        process.stderr.write(`${(error as Error)?.stack}\n`);
      }
    }
    return (process.exitCode = code);
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

if (isEntryPoint()) await runCli();
