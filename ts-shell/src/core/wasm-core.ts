/**
 * The Wasm recovery core: the Rust core compiled to a WebAssembly component, transpiled by jco to
 * wasm/pkg/remit_core.js. This adapter only converts: bytes in, bytes out, decoded with
 * ./encoding.ts. The module is loaded lazily so the reference core works without a Wasm build.
 */

import {
  decodeAdmission, decodeRecovery, encodeAdmissionRequest, isWellFormedRequest, MALFORMED_REQUEST_BYTES,
} from './encoding.js';
import type { Admission, AdmissionRequest, Recovery, RecoveryCore } from './types.js';

/** What jco generates for the component's exports (canonical encodings of docs/core-api.md). */
export interface WasmCoreExports {
  recover(log: Uint8Array): Uint8Array;
  admit(log: Uint8Array, request: Uint8Array): Uint8Array;
}

export const WASM_CORE_MODULE_URL = new URL('../../../wasm/pkg/remit_core.js', import.meta.url);

/** The Wasm core cannot be loaded: not built, or the build is broken. */
export class CoreUnavailableError extends Error {
  override readonly name = 'CoreUnavailableError';
  constructor(
    readonly reason: 'WASM_NOT_BUILT' | 'WASM_LOAD_FAILED',
    readonly moduleUrl: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The Wasm core trapped or threw: a bug in the core (it must be total), never bad input. */
export class CoreTrapError extends Error {
  override readonly name = 'CoreTrapError';
  constructor(readonly operation: 'recover' | 'admit', readonly logLen: number, options?: { cause?: unknown }) {
    super(`the Wasm core failed in ${operation} on a ${logLen}-byte log: ${String((options?.cause as Error)?.message ?? options?.cause)}`, options);
  }
}

function isModuleNotFound(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'ENOENT';
}

async function importExports(moduleUrl: URL): Promise<WasmCoreExports> {
  let mod: Partial<WasmCoreExports>;
  try {
    mod = (await import(moduleUrl.href)) as Partial<WasmCoreExports>;
  } catch (e) {
    if (isModuleNotFound(e)) {
      throw new CoreUnavailableError('WASM_NOT_BUILT', moduleUrl.href,
        `the Wasm core is not built (${moduleUrl.pathname} is missing): run npm run setup`, { cause: e });
    }
    throw new CoreUnavailableError('WASM_LOAD_FAILED', moduleUrl.href,
      `the Wasm core at ${moduleUrl.pathname} failed to load (${String((e as Error)?.message ?? e)}): run npm run setup`, { cause: e });
  }
  if (typeof mod.recover !== 'function' || typeof mod.admit !== 'function') {
    throw new CoreUnavailableError('WASM_LOAD_FAILED', moduleUrl.href,
      `${moduleUrl.pathname} does not export recover and admit: run npm run setup`);
  }
  return mod as WasmCoreExports;
}

/** Wrap component exports (or any pair of functions with the same contract) as a RecoveryCore. */
export function wasmCoreFromExports(exports: WasmCoreExports): RecoveryCore {
  const recoverEncoded = (log: Uint8Array): Uint8Array => {
    try {
      return exports.recover(log);
    } catch (e) {
      throw new CoreTrapError('recover', log.length, { cause: e });
    }
  };
  const admitEncoded = (log: Uint8Array, request: Uint8Array): Uint8Array => {
    try {
      return exports.admit(log, request);
    } catch (e) {
      throw new CoreTrapError('admit', log.length, { cause: e });
    }
  };
  return {
    name: 'wasm',
    recoverEncoded,
    admitEncoded,
    recover: (log: Uint8Array): Recovery => decodeRecovery(recoverEncoded(log)),
    admit: (log: Uint8Array, request: AdmissionRequest): Admission => {
      // A request the encoding cannot carry goes in as bytes every core refuses as BAD_REQUEST, so
      // the log checks (LOG_INVALID, NO_RUN) still come first, as for any malformed request.
      const bytes = isWellFormedRequest(request) ? encodeAdmissionRequest(request) : MALFORMED_REQUEST_BYTES;
      return decodeAdmission(admitEncoded(log, bytes));
    },
  };
}

/** Load the Wasm core. Throws CoreUnavailableError (with "run npm run setup") when not built. */
export async function loadWasmCore(moduleUrl: URL = WASM_CORE_MODULE_URL): Promise<RecoveryCore> {
  return wasmCoreFromExports(await importExports(moduleUrl));
}
