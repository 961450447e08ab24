import type { Command } from 'commander';
import { UnknownWorkflowError } from '../../errors.js';
import { checkStart } from '../../remit.js';
import type { Workflow } from '../../workflow/workflow.js';
import { openSession, parseJsonArgument, print, UsageError, type WorkflowModule } from '../context.js';
import { describeResult, exitCodeForResult } from '../output.js';
import type { CommandModule } from '../registry.js';
import { drivingRun } from '../stalled.js';

/** The workflow `--name` picks (default: the module's first) and the input (default: its sampleInput). */
function chooseStart(module: WorkflowModule, name: string | undefined, input: unknown): { wf: Workflow; input: unknown } {
  const wfs = module.workflows;
  const wf = name !== undefined ? wfs.find((w) => w.name === name) : wfs[0];
  // The library's error for a workflow name nothing registers: REMIT_UNKNOWN_WORKFLOW, exit code 6.
  if (!wf) {
    const error = new UnknownWorkflowError(name ?? '', wfs.map((w) => w.name));
    error.message += `; --name picks a workflow of the module ${module.path}`;
    throw error;
  }
  if (input === undefined) throw new UsageError('--input is required: this workflow module exports no sampleInput');
  return { wf, input };
}

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
        let start: { wf: Workflow; input: unknown; runId: string } | undefined;
        // Everything start() would refuse before writing is checked before the database is created.
        const check = (module: WorkflowModule) => {
          const chosen = chooseStart(module, opts.name, opts.input === undefined ? module.sampleInput : explicitInput);
          // The id is generated here, not by start(), so that a stall can name the run (stalled.ts).
          start = { ...chosen, runId: checkStart(chosen.wf, chosen.input, opts.runId, '--run-id').runId };
        };
        const session = await openSession(command, { workflows: 'required', database: 'create', check });
        try {
          const { wf, input, runId } = start!;
          drivingRun(session.remit, runId);
          const result = await session.remit.start(wf, input, { runId });
          print(session.options, result, () => describeResult(result));
          process.exitCode = exitCodeForResult(result);
        } finally {
          await session.close();
        }
      });
  },
};
