/**
 * Spawning child-runner.ts processes (through tsx) and reading their JSON-line events.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ChildSpec } from './child-runner.js';

export const CHILD_RUNNER_PATH = fileURLToPath(new URL('./child-runner.ts', import.meta.url));

/**
 * `node --import <tsx>`: tsx resolved from this package, so the cwd does not matter; the
 * `remit-source` condition makes 'remit' the library's sources in this repository.
 */
export function tsxNodeArgs(): string[] {
  return ['--conditions=remit-source', '--import', import.meta.resolve('tsx')];
}

export interface ChildEvent {
  event: 'ready' | 'fault' | 'result' | 'error';
  [key: string]: unknown;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  events: ChildEvent[];
  stderr: string;
}

export class ChildHandle {
  readonly events: ChildEvent[] = [];
  readonly exited: Promise<ChildExit>;
  private stderr = '';
  private waiters: Array<{ event: string; resolve: (e: ChildEvent) => void }> = [];

  constructor(readonly process: ChildProcess) {
    createInterface({ input: process.stdout! }).on('line', (line) => this.onLine(line));
    process.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => {
      process.on('exit', (code, signal) => {
        // Let the last stdout lines arrive before reporting.
        setImmediate(() => resolve({ code, signal, events: this.events, stderr: this.stderr }));
      });
    });
  }

  private onLine(line: string): void {
    let event: ChildEvent;
    try {
      event = JSON.parse(line) as ChildEvent;
    } catch {
      this.stderr += `[stdout] ${line}\n`;
      return;
    }
    this.events.push(event);
    for (const w of this.waiters.filter((x) => x.event === event.event)) w.resolve(event);
    this.waiters = this.waiters.filter((x) => x.event !== event.event);
  }

  /** Resolves with the first event named `name` (or rejects when the child exits first). */
  waitFor(name: ChildEvent['event'], timeoutMs = 30_000): Promise<ChildEvent> {
    const seen = this.events.find((e) => e.event === name);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`child ${this.process.pid}: no ${name} event within ${timeoutMs} ms; stderr: ${this.stderr}`)), timeoutMs);
      this.waiters.push({ event: name, resolve: (e) => { clearTimeout(timer); resolve(e); } });
      void this.exited.then((exit) => {
        clearTimeout(timer);
        const late = this.events.find((e) => e.event === name);
        if (late) resolve(late);
        else reject(new Error(`child exited (code ${exit.code}, signal ${exit.signal}) before ${name}; stderr: ${exit.stderr}`));
      });
    });
  }

  /** Release a child started with waitForGo. */
  go(): void {
    this.process.stdin!.write('go\n');
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    this.process.kill(signal);
  }
}

export function spawnChild(spec: ChildSpec, cwd = process.cwd()): ChildHandle {
  const child = spawn(process.execPath, [...tsxNodeArgs(), CHILD_RUNNER_PATH, JSON.stringify(spec)], {
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  return new ChildHandle(child);
}
