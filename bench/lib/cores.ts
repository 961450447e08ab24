/** Load both recovery cores through the shell's factory; a missing Wasm build becomes a note, not a crash. */

import { createCore } from 'remit/core';
import type { RecoveryCore } from 'remit/core';

export interface LoadedCore {
  impl: 'wasm' | 'reference';
  core: RecoveryCore | null;
  /** Why the core could not be loaded. */
  unavailable?: string;
}

export async function loadCores(): Promise<LoadedCore[]> {
  const out: LoadedCore[] = [];
  for (const impl of ['wasm', 'reference'] as const) {
    try {
      out.push({ impl, core: await createCore(impl) });
    } catch (e) {
      out.push({ impl, core: null, unavailable: String((e as Error)?.message ?? e) });
    }
  }
  return out;
}
