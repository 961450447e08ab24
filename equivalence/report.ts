/** Human-readable accounts of divergences and logs, for failure messages and the corpus. */

import { decodeLog, LogErrorName } from 'remit/core';
import { decodeAdmission, decodeFed, decodeRecovery } from 'remit/core';
import { RecordKind, type LogRecord } from 'remit/core';
import { hex, type Divergence } from './compare.js';

const KIND_NAMES = Object.fromEntries(Object.entries(RecordKind).map(([k, v]) => [v, k])) as Record<number, string>;

/** Bytes as text when they are printable ASCII, else hex. */
export function showBytes(b: Uint8Array): string {
  const printable = b.every((c) => c >= 0x20 && c < 0x7f);
  if (printable && b.length <= 80) return JSON.stringify(Buffer.from(b).toString('latin1'));
  return `0x${hex(b.subarray(0, 64))}${b.length > 64 ? `…(${b.length} bytes)` : ''}`;
}

function showValue(v: unknown): unknown {
  if (v instanceof Uint8Array) return showBytes(v);
  if (Array.isArray(v)) return v.map(showValue);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, showValue(x)]));
  return v;
}

export function describeRecord(r: LogRecord): string {
  const { kind, seq, ...fields } = r;
  return `#${seq} ${KIND_NAMES[kind] ?? kind} ${JSON.stringify(showValue(fields))}`;
}

export function describeLog(log: Uint8Array): string {
  const d = decodeLog(log);
  const lines = d.records.map(describeRecord);
  if (d.error) lines.push(`(codec: ${d.error.message}, kind ${d.error.kind})`);
  if (d.tornLen) lines.push(`(torn tail: ${d.tornLen} bytes at offset ${d.durableLen})`);
  return lines.join('\n');
}

function decodeOutput(op: Divergence['operation'], out: string): string {
  if (out.startsWith('threw')) return out;
  try {
    const bytes = Buffer.from(out, 'hex');
    const decoded = op === 'admit' || op === 'admitFrom' ? decodeAdmission(bytes)
      : op === 'feed' ? decodeFed(bytes)
      : op === 'split' ? (bytes.length === 11 ? decodeAdmission(bytes) : tryRecovery(bytes))
      : decodeRecovery(bytes);
    const v = showValue(decoded) as Record<string, unknown>;
    if (op === 'recover' && 'code' in v && !('status' in v)) v['codeName'] = LogErrorName[v['code'] as 1];
    return JSON.stringify(v);
  } catch (e) {
    return `(not a valid encoding: ${(e as Error).message})`;
  }
}

/** A split divergence compares recoveries or summaries: decode as a recovery when it is one. */
function tryRecovery(bytes: Uint8Array): unknown {
  try {
    return decodeRecovery(bytes);
  } catch {
    return { summary: bytes };
  }
}

export function describeDivergence(d: Divergence): string {
  if (d.coreNames[0] === 'model') {
    // The extracted model's divergence: both outputs are the comparable parts (./oracle.ts), as JSON.
    return [
      `DIVERGENCE from the extracted model in ${d.operation}${d.request ? ` of request ${hex(d.request)}` : ''} on a ${d.log.length}-byte log`,
      `log hex: ${hex(d.log)}`,
      'log records:',
      describeLog(d.log).replace(/^/gm, '  '),
      `model (comparable parts): ${d.outputs[0]}`,
      `${d.coreNames[1]} (comparable parts): ${d.outputs[1]}`,
    ].join('\n');
  }
  return [
    `DIVERGENCE in ${d.operation}${d.request ? ` of request ${hex(d.request)}` : ''}${d.cut === undefined ? '' : ` (cut at byte ${d.cut})`} on a ${d.log.length}-byte log`,
    `log hex: ${hex(d.log)}`,
    'log records:',
    describeLog(d.log).replace(/^/gm, '  '),
    `${d.coreNames[0]}: ${d.outputs[0]}`,
    `  = ${decodeOutput(d.operation, d.outputs[0])}`,
    `${d.coreNames[1]}: ${d.outputs[1]}`,
    `  = ${decodeOutput(d.operation, d.outputs[1])}`,
  ].join('\n');
}
