/**
 * The adapter driver: spawns an adapter process, sends JSON-line requests, and tells a reply from
 * a crash. A process that dies (SIGKILL at a fault point, or anything else) resolves every pending
 * request as `crashed`; the runner then starts a fresh process on the same store and continues.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import readline from 'node:readline';
import { FaultEventSchema, ReplySchema, type FaultEvent, type Request } from './protocol.js';

export interface AdapterSpec {
  /** Stable system id used in cell names, reports and `--system`. */
  id: string;
  /** Human name for report columns. */
  label: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** How long one process may take to answer its first request (imports); default DEFAULT_STARTUP_MS. */
  startupMs?: number;
  /** How long one request may take once the process is up; default the runner's REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
}

export const DEFAULT_STARTUP_MS = 60_000;

export type RequestResult =
  | { kind: 'reply'; result: unknown }
  | { kind: 'adapter-error'; message: string }
  | { kind: 'crashed'; signal: string | null; exitCode: number | null }
  | { kind: 'timeout'; timeoutMs: number };

interface Pending {
  op: string;
  resolve: (r: RequestResult) => void;
  timer: NodeJS.Timeout;
}

const STDERR_TAIL_CHARS = 8_000;

/** Adapter processes not yet exited, so that an interrupted campaign can end them (killLiveAdapters). */
const LIVE = new Set<ChildProcessWithoutNullStreams>();
/** Set by killLiveAdapters: the campaign is being stopped, no adapter process may start any more. */
let stopping = false;

/**
 * SIGKILL every adapter process still running and wait (at most `timeoutMs`) until they have
 * exited, so that none writes into a work folder about to be removed (Ctrl-C, SIGTERM).
 */
export async function killLiveAdapters(timeoutMs = 3_000): Promise<void> {
  stopping = true;
  const waits = [...LIVE].map((child) => {
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    child.kill('SIGKILL');
    return exited;
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(waits), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}

export class AdapterProcess {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private faultEvents: FaultEvent[] = [];
  private stderrTail = '';
  private exitInfo: { signal: string | null; exitCode: number | null } | null = null;
  readonly exited: Promise<void>;

  private constructor(
    readonly spec: AdapterSpec,
    private readonly child: ChildProcessWithoutNullStreams,
  ) {
    this.exited = new Promise((resolve) => {
      child.on('exit', (exitCode, signal) => {
        this.exitInfo = { signal, exitCode };
        for (const [id, p] of this.pending) {
          clearTimeout(p.timer);
          p.resolve({ kind: 'crashed', signal, exitCode });
          this.pending.delete(id);
        }
        resolve();
      });
    });
    readline.createInterface({ input: child.stdout }).on('line', (line) => this.onLine(line));
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    // A write to a dead process's stdin must not crash the harness; the exit handler reports it.
    child.stdin.on('error', () => undefined);
  }

  static spawn(spec: AdapterSpec, cwd: string): AdapterProcess {
    if (stopping) throw new Error(`${spec.id}: the campaign is being stopped (interrupted); no adapter process starts`);
    const child = spawn(spec.command, spec.args, {
      cwd,
      env: { ...process.env, ...spec.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    LIVE.add(child);
    child.once('exit', () => LIVE.delete(child));
    return new AdapterProcess(spec, child);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.exitInfo === null;
  }

  get stderr(): string {
    return this.stderrTail;
  }

  /** Fault events the adapter announced since the last call. */
  takeFaultEvents(): FaultEvent[] {
    const events = this.faultEvents;
    this.faultEvents = [];
    return events;
  }

  request(req: Request, timeoutMs: number): Promise<RequestResult> {
    if (this.exitInfo !== null) {
      return Promise.resolve({ kind: 'crashed', ...this.exitInfo });
    }
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ kind: 'timeout', timeoutMs });
      }, timeoutMs);
      this.pending.set(id, { op: req.op, resolve, timer });
      this.child.stdin.write(`${JSON.stringify({ id, ...req })}\n`);
    });
  }

  /** Ask the adapter to exit; kill it (this child only, by its pid) if it does not. */
  async shutdown(graceMs = 2_000): Promise<void> {
    if (!this.alive) return;
    void this.request({ op: 'shutdown' }, graceMs);
    this.child.stdin.end();
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  kill(): void {
    if (this.alive) this.child.kill('SIGKILL');
  }

  private onLine(line: string): void {
    if (line.trim().length === 0) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.stderrTail = (this.stderrTail + `[stdout, not JSON] ${line}\n`).slice(-STDERR_TAIL_CHARS);
      return;
    }
    const event = FaultEventSchema.safeParse(value);
    if (event.success) {
      this.faultEvents.push(event.data);
      return;
    }
    const reply = ReplySchema.safeParse(value);
    if (!reply.success) {
      this.stderrTail = (this.stderrTail + `[stdout, not a reply] ${line}\n`).slice(-STDERR_TAIL_CHARS);
      return;
    }
    const pending = this.pending.get(reply.data.id);
    if (pending === undefined) return; // a reply after its timeout: already reported as a timeout
    this.pending.delete(reply.data.id);
    clearTimeout(pending.timer);
    pending.resolve(
      reply.data.ok ? { kind: 'reply', result: reply.data.result } : { kind: 'adapter-error', message: reply.data.error.message },
    );
  }
}
