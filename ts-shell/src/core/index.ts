/**
 * The recovery core's public face for the shell: one factory, the types, the codec and the
 * encodings. Both cores implement docs/core-api.md; the Wasm core is the default.
 */

import { reference } from './reference-core.js';
import { loadWasmCore } from './wasm-core.js';
import type { RecoveryCore } from './types.js';

export type CoreKind = 'wasm' | 'reference';

/**
 * A recovery core. 'wasm' (default) loads the component and throws CoreUnavailableError with
 * "run npm run setup" when it is not built; 'reference' is the pure-TypeScript core.
 */
export async function createCore(kind: CoreKind = 'wasm'): Promise<RecoveryCore> {
  if (kind === 'reference') return reference;
  if (kind === 'wasm') return loadWasmCore();
  throw new TypeError(`unknown core kind ${JSON.stringify(kind)}: expected "wasm" or "reference"`);
}

export * from './types.js';
export {
  encodeRecord, encodeLog, decodeRecordAt, decodeLog, frameRecord, concatBytes, logDecodeError, LogErrorName,
  RecordEncodeError, type DecodeStep, type DecodedLog, type LogDecodeError,
} from './codec.js';
export {
  encodeRecovery, decodeRecovery, encodeAdmissionRequest, parseAdmissionRequest, encodeAdmission, decodeAdmission,
  isWellFormedRequest, EncodingError, AdmissionRequestError,
} from './encoding.js';
export { crc32c, crc32cUpdate } from './crc32c.js';
export { MAX_NAME_LEN, MAX_NODE_COUNT, MAX_PAYLOAD_LEN, FORMAT_VERSION } from './framing.js';
export { CoreUnavailableError, CoreTrapError } from './wasm-core.js';
export { reference, recover, admit } from './reference-core.js';
export { loadWasmCore, wasmCoreFromExports, type WasmBinding, type LoadWasmCoreOptions } from './wasm-core.js';
