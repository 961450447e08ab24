/**
 * Test support for the PostgreSQL store (imported by postgres*.test.ts only).
 *
 * The tests need a server: `REMIT_PG_URL` (scripts/test.sh sets it after `scripts/pg.sh start`).
 * Without it they FAIL, saying how to start one, unless `REMIT_SKIP_PG=1` asks to skip them; a
 * skip is announced on stderr and shows in vitest's skipped count. Never a silent pass.
 */

import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { describe, it } from 'vitest';

export const HOW_TO_START = [
  'the PostgreSQL store tests need a server: set REMIT_PG_URL, e.g.',
  '  bash scripts/pg.sh start && export REMIT_PG_URL="$(bash scripts/pg.sh url)"',
  '(or run bash scripts/test.sh, which does this), or set REMIT_SKIP_PG=1 to skip them explicitly.',
].join('\n');

export type PgTestTarget = { kind: 'url'; url: string } | { kind: 'skip' } | { kind: 'missing' };

export function pgTestTarget(): PgTestTarget {
  const url = process.env.REMIT_PG_URL;
  if (url) return { kind: 'url', url };
  if (process.env.REMIT_SKIP_PG === '1') return { kind: 'skip' };
  return { kind: 'missing' };
}

/** `describe` that runs with a server, fails without one, and skips only when told to. */
export function describePg(name: string, body: (url: string) => void): void {
  const target = pgTestTarget();
  if (target.kind === 'url') {
    describe(name, () => body(target.url));
  } else if (target.kind === 'skip') {
    process.stderr.write(`SKIPPED (REMIT_SKIP_PG=1): ${name}\n`);
    describe.skip(name, () => it('needs PostgreSQL', () => {}));
  } else {
    describe(name, () => {
      it('has a PostgreSQL server to test against (REMIT_PG_URL)', () => {
        throw new Error(HOW_TO_START);
      });
    });
  }
}

/** Runs `text` on a connection of its own (a hand edit, an admin's statement), then closes it. */
export async function runSql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A schema name no other test uses. */
export function freshSchemaName(prefix = 'remit_t'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Drops schemas created by a test file (each test works in its own). */
export async function dropSchemas(url: string, schemas: Iterable<string>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * A TCP relay on a free loopback port to the server at `upstreamHost:upstreamPort`: what each
 * connection does is the subclass's `relay`. `stop()` cuts every connection and closes the port.
 */
abstract class TcpRelay {
  private server: net.Server | undefined;
  protected readonly sockets = new Set<net.Socket>();

  constructor(protected readonly upstreamHost: string, protected readonly upstreamPort: number) {}

  async start(): Promise<number> {
    this.server = net.createServer((client) => this.relay(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server!.address() as net.AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  protected abstract relay(client: net.Socket): void;
}

/**
 * A TCP relay between the store and the server that can lose a reply: after `armLoseReply(marker)`,
 * the next client message containing `marker` is delivered to the server, the server's answer is
 * swallowed, and both sockets are cut. The server has by then executed (and committed) the
 * statement; the client only sees a broken connection. That is the ambiguous commit.
 */
export class ReplyLosingProxy extends TcpRelay {
  private marker: string | undefined;
  lostReplies = 0;


  armLoseReply(marker: string): void {
    this.marker = marker;
  }


  protected relay(client: net.Socket): void {
    const upstream = net.connect(this.upstreamPort, this.upstreamHost);
    this.sockets.add(client).add(upstream);
    let losing = false;
    client.on('data', (chunk) => {
      if (this.marker !== undefined && chunk.includes(this.marker)) {
        this.marker = undefined;
        losing = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!losing) {
        client.write(chunk);
        return;
      }
      // The server answered, so it has finished the statement. Drop the answer and the line.
      this.lostReplies++;
      client.destroy();
      upstream.destroy();
    });
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', closeBoth).on('error', closeBoth);
    upstream.on('close', closeBoth).on('error', closeBoth);
  }
}

/**
 * A TCP relay between the store and the server that cuts a connection part-way: after
 * `armCut(marker, cut)`, the connection whose next client message contains `marker` passes on at
 * most `cut.requestBytes` more bytes to the server (from that message on) and `cut.replyBytes` more
 * to the client, then both sockets are reset. Depending on where the cut falls, the server never
 * got the statement, ran it and lost its reply, or got only part of it.
 */
export class CuttingProxy extends TcpRelay {
  private armed: { marker: string; requestBytes: number; replyBytes: number } | undefined;
  cuts = 0;


  armCut(marker: string, cut: { requestBytes?: number; replyBytes: number }): void {
    this.armed = { marker, requestBytes: cut.requestBytes ?? Infinity, replyBytes: cut.replyBytes };
  }

  /** Whether the armed cut is still waiting for its marker. */
  get pending(): boolean {
    return this.armed !== undefined;
  }

  disarm(): void {
    this.armed = undefined;
  }


  protected relay(client: net.Socket): void {
    const upstream = net.connect(this.upstreamPort, this.upstreamHost);
    this.sockets.add(client).add(upstream);
    let budget: { requestBytes: number; replyBytes: number } | undefined;
    let cutting = false;
    const cut = () => {
      if (cutting) return;
      cutting = true;
      this.cuts++;
      // After the bytes let through are handed to the sockets.
      setImmediate(() => {
        client.resetAndDestroy();
        upstream.resetAndDestroy();
      });
    };
    // Forwards what the budget left in `direction` allows, and cuts when a chunk goes past it.
    const pass = (chunk: Buffer, to: net.Socket, direction: 'requestBytes' | 'replyBytes') => {
      if (budget === undefined) {
        to.write(chunk);
        return;
      }
      const allowed = Math.min(chunk.length, budget[direction]);
      budget[direction] -= allowed;
      if (allowed > 0) to.write(chunk.subarray(0, allowed));
      if (allowed < chunk.length) cut();
    };
    client.on('data', (chunk: Buffer) => {
      if (budget === undefined && this.armed !== undefined && chunk.includes(this.armed.marker)) {
        budget = { requestBytes: this.armed.requestBytes, replyBytes: this.armed.replyBytes };
        this.armed = undefined;
      }
      pass(chunk, upstream, 'requestBytes');
    });
    upstream.on('data', (chunk: Buffer) => pass(chunk, client, 'replyBytes'));
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('close', closeBoth).on('error', closeBoth);
    upstream.on('close', closeBoth).on('error', closeBoth);
  }
}
