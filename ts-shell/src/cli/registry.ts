/**
 * The CLI's command registry. Each command lives in its own module exporting a CommandModule; to
 * add one, import its module here and append it to COMMAND_MODULES, or call
 * registerCommands(program, [yourModule]) from your own entry point.
 */

import type { Command } from 'commander';
import { continueCommand } from './commands/continue.js';
import { forkCommand } from './commands/fork.js';
import { inspectCommand } from './commands/inspect.js';
import { repairCommand } from './commands/repair.js';
import { resumeCommand } from './commands/resume.js';
import { runCommand } from './commands/run.js';
import { runsCommand } from './commands/runs.js';
import { scrubCommand } from './commands/scrub.js';

export interface CommandModule {
  name: string;
  register(program: Command): void;
}

export const COMMAND_MODULES: CommandModule[] = [
  runCommand,
  resumeCommand,
  continueCommand,
  forkCommand,
  inspectCommand,
  runsCommand,
  repairCommand,
  scrubCommand,
];

export function registerCommands(program: Command, modules: readonly CommandModule[] = COMMAND_MODULES): Command {
  for (const module of modules) module.register(program);
  return program;
}
