/**
 * Canaries: the model-based checks must fail on known-broken systems, or they prove nothing.
 * Each canary runs a fixed script against a deliberately broken part and expects a violation.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createReferenceCore } from '../core/reference-core.js';
import {
  ConcurrentContinueCommand, ContinueCommand, CrashCommand, DuplicateResumeCommand, ModelViolation, RecoverersCommand, ResumeCommand,
  StartCommand,
} from '../../test-support/model/commands.js';
import { Model, RealSystem, type RealSystemOptions } from '../../test-support/model/system.js';
import type { RecoveryCore } from '../core/types.js';

async function runScript(core: RecoveryCore, commands: fc.AsyncCommand<Model, RealSystem>[], options: RealSystemOptions = {}): Promise<unknown> {
  const dir = mkdtempSync(join(tmpdir(), 'remit-canary-'));
  const real = new RealSystem('memory', core, [core], dir, options);
  try {
    await fc.asyncModelRun(() => ({ model: new Model(), real }), commands);
    return null;
  } catch (error) {
    return error;
  } finally {
    await real.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const damaged = { amountCents: 4_000, reason: 'damaged' as const };

describe('model-based canaries', () => {
  it('the fixed scripts pass on the real system (so the canaries fail for the planted bug only)', async () => {
    const core = createReferenceCore();
    expect(await runScript(core, [new StartCommand(damaged, null), new ResumeCommand(0, true, 'resume.after-claim'), new DuplicateResumeCommand(0, false)])).toBeNull();
    expect(await runScript(core, [new StartCommand(damaged, 'effect.after-handler@chargeCard'), new CrashCommand(), new ContinueCommand(0, null)])).toBeNull();
    expect(await runScript(core, [new RecoverersCommand(damaged, 4, false)])).toBeNull();
    expect(await runScript(core, [new RecoverersCommand(damaged, 4, true)])).toBeNull();
    expect(await runScript(core, [new StartCommand(damaged, 'append.after:EFFECT_INTENT'), new ConcurrentContinueCommand(0, 4, true)])).toBeNull();
  });

  it('sequencers with the invocation fence switched off are caught when recoverers race (the fence)', async () => {
    const core = createReferenceCore();
    const error = await runScript(core, [new RecoverersCommand(damaged, 4, false)], { fence: 'off' });
    expect(error).toBeInstanceOf(ModelViolation);
    expect(String(error)).toMatch(/chargeCard .* invoked [2-9] times|P2 fence: effect .* invoked [2-9] times/);
    // The same without the exact count: the per-attempt bound alone catches it too.
    const bound = await runScript(core, [new StartCommand(damaged, 'append.after:EFFECT_INTENT'), new ConcurrentContinueCommand(0, 4, true)], { fence: 'off' });
    expect(bound).toBeInstanceOf(ModelViolation);
    expect(String(bound)).toMatch(/P2 fence: effect .*chargeCard.* invoked [2-9] times with 1 attempts recorded/);
  });

  it('a core that accepts a second claim is caught (consume-once)', async () => {
    const broken = createReferenceCore({ canary: 'accept-second-claim' });
    const error = await runScript(broken, [new StartCommand(damaged, null), new ResumeCommand(0, true, 'resume.after-claim'), new DuplicateResumeCommand(0, false)]);
    expect(error).toBeInstanceOf(ModelViolation);
    expect(String(error)).toMatch(/AlreadyConsumedError|P5/);
  });

  it('a sink that does not deduplicate is caught when a crash repeats a handler call (exactly-once)', async () => {
    const core = createReferenceCore();
    const error = await runScript(core, [new StartCommand(damaged, 'effect.after-handler@chargeCard'), new ContinueCommand(0, null)], { deduplicate: false });
    expect(error).toBeInstanceOf(ModelViolation);
    expect(String(error)).toMatch(/P2: effect .*chargeCard.* applied 2 times/);
  });
});
