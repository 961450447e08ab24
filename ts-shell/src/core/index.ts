/**
 * `remit/core`: the recovery core on its own, for services that embed it and for equivalence
 * fuzzing. One factory, the types, the codec and the encodings. Both cores implement
 * docs/core-api.md; the Wasm core is the default.
 */

import { CoreUnavailableError } from '../errors.js';
import { reference } from './reference-core.js';
import { loadWasmCore } from './wasm-core.js';
import type { RecoveryCore } from './types.js';

export type CoreKind = 'wasm' | 'reference';

/**
 * A recovery core. 'wasm' (default) loads the component from @remit/core-wasm and throws
 * CoreUnavailableError, saying how to fix it, when that fails: it never falls back silently.
 * 'reference' is the pure-TypeScript core.
 */
export async function createCore(kind: CoreKind = 'wasm'): Promise<RecoveryCore> {
  if (kind === 'reference') return reference;
  if (kind === 'wasm') return loadWasmCore();
  throw new CoreUnavailableError(String(kind), 'UNKNOWN_CORE', `unknown core kind ${JSON.stringify(kind)}: expected "wasm" or "reference"`);
}

export * from './types.js';
export {
  encodeRecord, encodeRecordV2, encodeLog, encodeLogV2, decodeRecordAt, decodeLog, frameRecord, concatBytes, logDecodeError,
  LogErrorName, chainOf, RecordEncodeError, type DecodeStep, type DecodedLog, type LogDecodeError, type ChainContext,
} from './codec.js';
export {
  encodeRecovery, decodeRecovery, encodeAdmissionRequest, parseAdmissionRequest, encodeAdmission, decodeAdmission,
  isWellFormedRequest, EncodingError, AdmissionRequestError, encodeFed, decodeFed,
} from './encoding.js';
export { crc32c, crc32cUpdate } from './crc32c.js';
export {
  MAX_NAME_LEN, MAX_NODE_COUNT, MAX_PAYLOAD_LEN, FORMAT_VERSION, FORMAT_VERSION_1, FORMAT_VERSION_2, linkOf, chainValueBefore,
} from './framing.js';
export { CoreUnavailableError, type CoreUnavailableReason } from '../errors.js';
export { CoreTrapError } from './wasm-core.js';
export { reference, recover, admit, feed, createReferenceCore, type ReferenceCanary, type ReferenceCoreTestOptions } from './reference-core.js';
export { loadWasmCore, wasmCoreFromExports, wasmCoreModuleUrl, type WasmBinding, type LoadWasmCoreOptions, type WasmCoreExports } from './wasm-core.js';
