/**
 * The effect sink every adapter writes to: an append-only file, one JSON line per event, each
 * line fsynced before the writer goes on, so the counts survive SIGKILL of the writer.
 *
 *   {"t":"invoke","node":"charge","key":"<idempotency key>","run":"<run id>","pid":123}
 *       a raw handler invocation (written first thing in the handler)
 *   {"t":"apply","node":"charge","key":"...","run":"...","pid":123}
 *       the outside effect itself; the sink deduplicates applied effects by key when counting
 *   {"t":"pure","node":"compute","run":"...","pid":123}
 *       a pure node's body started (lets checkers see a completed node run again)
 *
 * Adapters in other languages write the same lines (O_APPEND, one write per line, fsync).
 */
import fs from 'node:fs';

export type SinkEventType = 'invoke' | 'apply' | 'pure';

export interface SinkLine {
  t: SinkEventType;
  node: string;
  key?: string;
  run: string;
  pid: number;
}

export class EffectSinkWriter {
  private readonly fd: number;

  constructor(readonly path: string) {
    this.fd = fs.openSync(path, 'a');
  }

  invoke(node: string, key: string, run: string): void {
    this.write({ t: 'invoke', node, key, run, pid: process.pid });
  }

  apply(node: string, key: string, run: string): void {
    this.write({ t: 'apply', node, key, run, pid: process.pid });
  }

  pure(node: string, run: string): void {
    this.write({ t: 'pure', node, run, pid: process.pid });
  }

  close(): void {
    fs.closeSync(this.fd);
  }

  private write(line: SinkLine): void {
    // One write call per line: with O_APPEND the kernel places it atomically at the end, so lines
    // from concurrent processes never interleave.
    fs.writeSync(this.fd, `${JSON.stringify(line)}\n`);
    fs.fsyncSync(this.fd);
  }
}

export interface SinkContents {
  lines: SinkLine[];
  /** Bytes after the last newline (a line torn by a crash mid-write); never counted. */
  tornBytes: number;
}

export class SinkFormatError extends Error {
  constructor(path: string, lineNumber: number, reason: string) {
    super(`effect sink ${path}, line ${lineNumber}: ${reason}`);
    this.name = 'SinkFormatError';
  }
}

export function readSink(path: string): SinkContents {
  if (!fs.existsSync(path)) return { lines: [], tornBytes: 0 };
  const text = fs.readFileSync(path, 'utf8');
  const lastNewline = text.lastIndexOf('\n');
  const complete = lastNewline < 0 ? '' : text.slice(0, lastNewline);
  const tornBytes = text.length - (lastNewline + 1);
  const lines: SinkLine[] = [];
  complete.split('\n').forEach((raw, index) => {
    if (raw.length === 0) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new SinkFormatError(path, index + 1, 'not JSON');
    }
    lines.push(validateSinkLine(parsed, path, index + 1));
  });
  return { lines, tornBytes };
}

function validateSinkLine(value: unknown, path: string, lineNumber: number): SinkLine {
  const v = value as Partial<SinkLine> | null;
  if (v === null || typeof v !== 'object') throw new SinkFormatError(path, lineNumber, 'not an object');
  if (v.t !== 'invoke' && v.t !== 'apply' && v.t !== 'pure') throw new SinkFormatError(path, lineNumber, `bad field t`);
  if (typeof v.node !== 'string') throw new SinkFormatError(path, lineNumber, 'bad field node');
  if (typeof v.run !== 'string') throw new SinkFormatError(path, lineNumber, 'bad field run');
  if (v.t !== 'pure' && typeof v.key !== 'string') throw new SinkFormatError(path, lineNumber, 'bad field key');
  return { t: v.t, node: v.node, run: v.run, pid: typeof v.pid === 'number' ? v.pid : -1, ...(v.key === undefined ? {} : { key: v.key }) };
}

export interface EffectCounts {
  /** Raw handler invocations. */
  invocations: number;
  /** Outside effects applied, counting duplicates. */
  applyLines: number;
  /** Distinct idempotency keys applied: what a deduplicating sink actually applies. */
  appliedKeys: string[];
}

export function countEffects(lines: readonly SinkLine[], node: string): EffectCounts {
  const forNode = lines.filter((l) => l.node === node);
  const applied = forNode.filter((l) => l.t === 'apply');
  return {
    invocations: forNode.filter((l) => l.t === 'invoke').length,
    applyLines: applied.length,
    appliedKeys: [...new Set(applied.map((l) => l.key ?? ''))],
  };
}
