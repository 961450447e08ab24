/**
 * The cores the suite compares. The Wasm core must be built: when it is missing the suite fails
 * with a message, unless REMIT_ALLOW_NO_WASM=1 says to skip the Wasm comparisons (loudly).
 */

import { reference } from 'remit/core';
import { CoreUnavailableError, loadWasmCore } from 'remit/core';
import type { RecoveryCore } from 'remit/core';

export interface CoresUnderTest {
  reference: RecoveryCore;
  wasm: RecoveryCore | null;
  /** Why the Wasm core is missing (null when loaded). */
  wasmMissing: string | null;
  allowNoWasm: boolean;
}

export async function loadCoresUnderTest(): Promise<CoresUnderTest> {
  const allowNoWasm = process.env['REMIT_ALLOW_NO_WASM'] === '1';
  try {
    return { reference, wasm: await loadWasmCore(), wasmMissing: null, allowNoWasm };
  } catch (e) {
    if (!(e instanceof CoreUnavailableError)) throw e;
    // Every suite that loads the cores fails here, not by skipping its Wasm comparisons.
    if (!allowNoWasm) throw new Error(`${NO_WASM_HELP}\n${e.message}`);
    console.warn(`[equivalence] SKIPPING Wasm comparisons (REMIT_ALLOW_NO_WASM=1): ${e.message}`);
    return { reference, wasm: null, wasmMissing: e.message, allowNoWasm };
  }
}

export const NO_WASM_HELP =
  'the Wasm core is required for the equivalence suite; build it with `npm run setup`, or set REMIT_ALLOW_NO_WASM=1 to skip the Wasm comparisons';
