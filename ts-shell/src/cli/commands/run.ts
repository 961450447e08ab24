import type { Command } from 'commander';
import { openSession, parseJsonArgument, print, UsageError } from '../context.js';
import { describeResult, exitCodeForResult } from '../output.js';
import type { CommandModule } from '../registry.js';

export const runCommand: CommandModule = {
  name: 'run',
  register(program: Command) {
    program
      .command('run')
      .description('start a run and drive it until it parks, completes or fails')
      .option('-i, --input <json>', 'initial state as JSON, or @file.json (default: the module\'s sampleInput)')
      .option('-n, --name <workflow>', 'which workflow of the module (default: the first)')
      .option('-r, --run-id <id>', 'run id (default: <workflow>-<uuid>)')
      .action(async (opts: { input?: string; name?: string; runId?: string }, command: Command) => {
        const explicitInput = opts.input === undefined ? undefined : parseJsonArgument(opts.input, '--input');
        const session = await openSession(command, { workflows: 'required', database: 'create' });
        try {
          const wfs = session.module.workflows;
          const wf = opts.name ? wfs.find((w) => w.name === opts.name) : wfs[0];
          if (!wf) throw new UsageError(`--name ${opts.name}: the module has no such workflow (has: ${wfs.map((w) => w.name).join(', ')})`);
          const input: unknown = opts.input === undefined ? session.module.sampleInput : explicitInput;
          if (input === undefined) throw new UsageError('--input is required: this workflow module exports no sampleInput');
          const result = await session.remit.start(wf, input, opts.runId === undefined ? {} : { runId: opts.runId });
          print(session.options, result, () => describeResult(result));
          process.exitCode = exitCodeForResult(result);
        } finally {
          await session.close();
        }
      });
  },
};
