/**
 * The adapter side of the JSON-lines protocol for adapters written in TypeScript: a request loop
 * over stdin, replies on stdout, and the fault switch that fires a named fault exactly once.
 * stdout carries protocol lines only, so console output is redirected to stderr.
 */
import fs from 'node:fs';
import readline from 'node:readline';

export type FaultKind = 'sigkill' | 'throw' | 'store-error';
export interface ArmedFault {
  point: string;
  kind: FaultKind;
  /** Fire at the n-th time the point is reached after arming (default 1: the first). */
  occurrence?: number;
}

/** The error a `throw` fault raises; adapters report it as `error.kind = "injected"`. */
export class InjectedFault extends Error {
  constructor(readonly point: string) {
    super(`injected fault at ${point}`);
    this.name = 'InjectedFault';
  }
}

function writeLine(value: unknown): void {
  // Synchronous write: an event line must be out of the process before a SIGKILL that follows it.
  fs.writeSync(1, `${JSON.stringify(value)}\n`);
}

export class FaultSwitch {
  private armed: ArmedFault | null = null;
  /** Times the armed point was reached so far. */
  private reached = 0;

  arm(fault: ArmedFault | null): void {
    this.armed = fault;
    this.reached = 0;
  }

  get current(): ArmedFault | null {
    return this.armed;
  }

  /**
   * Called by the adapter when execution reaches `point`. If that fault is armed it fires once:
   * sigkill kills this process now; throw raises InjectedFault; store-error raises the error that
   * `makeStoreError` builds (the system's own store error type).
   */
  hit(point: string, makeStoreError?: () => Error): void {
    const fault = this.armed;
    if (fault === null || fault.point !== point) return;
    this.reached += 1;
    if (this.reached < (fault.occurrence ?? 1)) return;
    this.armed = null;
    writeLine({ event: 'fault', point, kind: fault.kind });
    if (fault.kind === 'sigkill') killSelf();
    if (fault.kind === 'store-error') {
      if (makeStoreError === undefined) throw new Error(`store-error fault at ${point}, which is not a store call`);
      throw makeStoreError();
    }
    throw new InjectedFault(point);
  }
}

export function killSelf(): never {
  process.kill(process.pid, 'SIGKILL');
  // The signal is delivered on return to user space; block so that nothing after this line runs.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
  throw new Error('SIGKILL did not end the process');
}

export type Handler = (args: Record<string, unknown>) => Promise<unknown>;

export interface ServeOptions {
  /** Clean-up before the process exits on `shutdown` or end of input (bounded by EXIT_CLEANUP_MS). */
  onExit?: () => Promise<void>;
}

/** The harness kills an adapter 2 s after asking it to shut down; clean-up must fit well within. */
const EXIT_CLEANUP_MS = 1_500;

let exiting: Promise<void> | null = null;

/** Runs `onExit` once (a shutdown request and the end of input may both ask for it). */
function cleanUp(options: ServeOptions): Promise<void> {
  exiting ??= runOnExit(options);
  return exiting;
}

async function runOnExit(options: ServeOptions): Promise<void> {
  if (options.onExit === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, EXIT_CLEANUP_MS);
  });
  await Promise.race([options.onExit().catch((e: unknown) => console.error(`clean-up at exit failed: ${String(e)}`)), deadline]);
  clearTimeout(timer);
}

/** Serve requests one at a time, in arrival order, until `shutdown` or end of input. */
export function serve(handlers: Record<string, Handler>, options: ServeOptions = {}): void {
  console.log = (...args: unknown[]) => console.error(...args);
  console.info = console.log;
  console.warn = (...args: unknown[]) => console.error(...args);
  const queue: string[] = [];
  let busy = false;
  const pump = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    while (queue.length > 0) {
      const line = queue.shift() as string;
      await handleLine(line, handlers, options);
    }
    busy = false;
  };
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    queue.push(line);
    void pump();
  });
  rl.on('close', () => {
    void pump()
      .then(() => cleanUp(options))
      .then(() => process.exit(0));
  });
}

async function handleLine(line: string, handlers: Record<string, Handler>, options: ServeOptions): Promise<void> {
  let request: { id?: unknown; op?: unknown } & Record<string, unknown>;
  try {
    request = JSON.parse(line);
  } catch {
    writeLine({ id: -1, ok: false, error: { message: 'request is not JSON' } });
    return;
  }
  const id = typeof request.id === 'number' ? request.id : -1;
  const op = typeof request.op === 'string' ? request.op : '';
  if (op === 'shutdown') {
    await cleanUp(options);
    writeLine({ id, ok: true, result: {} });
    process.exit(0);
  }
  const handler = handlers[op];
  if (handler === undefined) {
    writeLine({ id, ok: false, error: { message: `unknown op "${op}"` } });
    return;
  }
  try {
    writeLine({ id, ok: true, result: (await handler(request)) ?? {} });
  } catch (e) {
    const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    writeLine({ id, ok: false, error: { message } });
  }
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function stringArg(args: Record<string, unknown>, name: string): string {
  const v = args[name];
  if (typeof v !== 'string' || v.length === 0) throw new TypeError(`request field "${name}" must be a non-empty string`);
  return v;
}
