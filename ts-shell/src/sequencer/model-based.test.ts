/**
 * Model-based tests of the shell (fast-check commands): start, continue (with injected faults),
 * crash (drop the sequencer, reopen the store), resume (valid, invalid, duplicate, concurrent),
 * fork, continue-from-old-checkpoint; after every command the six properties are checked against
 * an independent model (../testing/model/). Matrix: {memory, sqlite} × {wasm, reference}.
 *
 * The Wasm variants need wasm/pkg (npm run setup). Without it they FAIL, unless
 * REMIT_ALLOW_NO_WASM=1, which skips them with a visible reason. Runs per cell: REMIT_MBT_RUNS
 * (default 50); a failure prints its seed and path for replay (REMIT_MBT_SEED, REMIT_MBT_PATH).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { createCore } from '../core/index.js';
import type { RecoveryCore } from '../core/types.js';
import { modelScript } from '../../test-support/model/commands.js';
import { Model, RealSystem, type StoreKind } from '../../test-support/model/system.js';

const RUNS = Number(process.env['REMIT_MBT_RUNS'] ?? 50);
const SEED = process.env['REMIT_MBT_SEED'] ? Number(process.env['REMIT_MBT_SEED']) : undefined;
const PATH = process.env['REMIT_MBT_PATH'];
const allowNoWasm = process.env['REMIT_ALLOW_NO_WASM'] === '1';

const reference = await createCore('reference');
let wasm: RecoveryCore | null = null;
let wasmError = '';
try {
  wasm = await createCore('wasm');
} catch (error) {
  wasmError = (error as Error).message;
}

async function runModel(storeKind: StoreKind, core: RecoveryCore): Promise<void> {
  const cores = wasm ? [core, core === wasm ? reference : wasm] : [core];
  await fc.assert(
    fc.asyncProperty(modelScript(20), async (commands) => {
      const dir = mkdtempSync(join(tmpdir(), 'remit-mbt-'));
      const real = new RealSystem(storeKind, core, cores, dir);
      try {
        await fc.asyncModelRun(() => ({ model: new Model(), real }), commands);
      } finally {
        await real.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }),
    { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), ...(PATH ? { path: PATH } : {}), endOnFailure: true },
  );
}

for (const storeKind of ['memory', 'sqlite'] as const) {
  describe(`model-based: ${storeKind} store`, () => {
    it(`reference core (${RUNS} runs)`, async () => {
      await runModel(storeKind, reference);
    });

    if (wasm) {
      it(`wasm core (${RUNS} runs)`, async () => {
        await runModel(storeKind, wasm!);
      });
    } else if (allowNoWasm) {
      it.skip(`wasm core SKIPPED: not built (${wasmError}); REMIT_ALLOW_NO_WASM=1 is set`, () => {});
    } else {
      it('wasm core', () => {
        throw new Error(`the Wasm core is not available (${wasmError}). Build it with npm run setup, or set REMIT_ALLOW_NO_WASM=1 to skip these cells explicitly.`);
      });
    }
  });
}
