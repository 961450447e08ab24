/**
 * openPostgresStore refuses every option value it cannot use with OptionInvalidError naming the
 * option, the value and what is allowed, before it connects (docs/postgres.md, "Timeouts and
 * retries"). No server is needed: the store is pointed at a fake server on loopback that records
 * each connection's startup packet (the parameters pg sends, statement_timeout and
 * application_name among them) and then hangs up, so a refusal is seen to connect nowhere, and an
 * accepted value is seen to reach the connection.
 */

import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OptionInvalidError, StoreError } from '../errors.js';
import { PostgresStore, openPostgresStore, type PostgresStoreOptions } from './postgres.js';

/** A loopback listener that keeps the startup parameters of every connection and closes it. */
class StartupRecorder {
  private server: net.Server | undefined;
  readonly startups: Record<string, string>[] = [];
  connections = 0;
  port = 0;

  async start(): Promise<void> {
    this.server = net.createServer((socket) => {
      this.connections++;
      let buffered = Buffer.alloc(0);
      socket.on('error', () => {});
      socket.on('data', (chunk) => {
        buffered = Buffer.concat([buffered, chunk]);
        if (buffered.length < 8) return;
        const length = buffered.readUInt32BE(0);
        if (buffered.length < length) return;
        const parts = buffered.subarray(8, length).toString('utf8').split('\u0000');
        const params: Record<string, string> = {};
        for (let i = 0; i + 1 < parts.length && parts[i] !== ''; i += 2) params[parts[i]!] = parts[i + 1]!;
        this.startups.push(params);
        socket.destroy();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

const recorder = new StartupRecorder();
beforeAll(() => recorder.start());
afterAll(() => recorder.stop());

/** Options that reach the fake server at once and give up after its first refusal. */
const base = (): PostgresStoreOptions => ({ connectionString: `postgres://remit@127.0.0.1:${recorder.port}/remit_test`, retryBudgetMs: 0, connectTimeoutMs: 2000 });

async function openWith(options: Record<string, unknown>): Promise<unknown> {
  try {
    const store = await openPostgresStore({ ...base(), ...options } as PostgresStoreOptions);
    await store.close();
    return undefined;
  } catch (error) {
    return error;
  }
}

const MAX_MS = 0x7fff_ffff;
const wholeMs = (min: number) => (v: unknown) => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= MAX_MS;
const orAbsent = (allowed: (v: unknown) => boolean) => (v: unknown) => v === undefined || allowed(v);

/** What each option allows (docs/postgres.md). */
const RULES: Record<string, (v: unknown) => boolean> = {
  statementTimeoutMs: orAbsent(wholeMs(0)),
  clientTimeoutMs: orAbsent(wholeMs(0)),
  connectTimeoutMs: orAbsent(wholeMs(0)),
  retryBudgetMs: orAbsent(wholeMs(0)),
  resolveTimeoutMs: orAbsent(wholeMs(0)),
  maxConnections: orAbsent((v) => Number.isSafeInteger(v) && (v as number) >= 1),
  migrate: orAbsent((v) => v === 'apply' || v === 'verify'),
  applicationName: orAbsent((v) => typeof v === 'string' && !v.includes('\u0000')),
  onAmbiguousWrite: orAbsent((v) => typeof v === 'function'),
  migrations: orAbsent((v) => Array.isArray(v) && v.length === 0),
  // Any object: its settings go to pg.Pool as they are (those the store reads are checked below).
  pool: orAbsent((v) => typeof v === 'object' && v !== null && !Array.isArray(v)),
};

/** Any value: fast-check's anything, and what a typo, an environment variable or a config file gives. */
const anyValue = fc.oneof(
  fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withNullPrototype: true }),
  fc.constantFrom<unknown>(
    'verfy', 'Verify', 'APPLY', '', '10s', 'ten', '5000', 0, 1, -1, 0.5, 1.5, 10_000, NaN, Infinity, -Infinity, 2 ** 31, 2 ** 53, -0, null, true, false,
    [], {}, () => {}, 'app\u0000name', Symbol('x'),
  ),
);

describe('openPostgresStore: an option value the store cannot use is refused before connecting', () => {
  for (const [option, allowed] of Object.entries(RULES)) {
    it(`(property) ${option}`, async () => {
      await fc.assert(
        fc.asyncProperty(anyValue.filter((v) => !allowed(v)), async (value) => {
          const connectionsBefore = recorder.connections;
          const error = await openWith({ [option]: value });
          expect(error).toBeInstanceOf(OptionInvalidError);
          expect(error).toMatchObject({ code: 'REMIT_OPTION_INVALID', option, field: option });
          expect((error as Error).message).toMatch(new RegExp(`^option ${option} must .*\\(got .*\\)`, 's'));
          expect(recorder.connections).toBe(connectionsBefore);
        }),
        { numRuns: 40, timeout: 5000 },
      );
    });
  }

  it.each([
    ['migrate', 'verfy'],
    ['statementTimeoutMs', '10s'],
    ['statementTimeoutMs', -1],
    ['statementTimeoutMs', 2 ** 31],
    ['clientTimeoutMs', 1.5],
    ['maxConnections', 0],
    ['maxConnections', 'ten'],
    ['connectTimeoutMs', 'x'],
    ['retryBudgetMs', 'x'],
    ['resolveTimeoutMs', -5],
  ])('the reported cases: %s %j', async (option, value) => {
    const connectionsBefore = recorder.connections;
    const started = Date.now();
    const error = await openWith({ [option]: value });
    expect(error).toMatchObject({ code: 'REMIT_OPTION_INVALID', option });
    expect((error as Error).message).toContain(`(got ${typeof value === 'string' ? JSON.stringify(value) : String(value)})`);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(recorder.connections).toBe(connectionsBefore);
  }, 10_000); // without the check, retryBudgetMs 'x' retried forever

  it.each([
    ['pool.max', { max: 0 }],
    ['pool.max', { max: '10' }],
    ['pool.connectionTimeoutMillis', { connectionTimeoutMillis: 'x' }],
    ['pool.application_name', { application_name: 42 }],
  ])('the pool settings the store reads are held to the same rules: %s', async (option, pool) => {
    const connectionsBefore = recorder.connections;
    expect(await openWith({ pool })).toMatchObject({ code: 'REMIT_OPTION_INVALID', option });
    expect(recorder.connections).toBe(connectionsBefore);
  });

  it('migrations (tests only): entries that are not { version, name, sql } numbered 1, 2, 3, ... are refused', async () => {
    for (const migrations of [[{ version: 1, name: 'a' }], [{ version: 2, name: 'a', sql: 'SELECT 1' }], [null], ['SELECT 1']]) {
      expect(await openWith({ migrations })).toMatchObject({ code: 'REMIT_OPTION_INVALID', option: 'migrations' });
    }
  });

  it('a schema or connection string of the wrong type keeps its documented code (BAD_SCHEMA_NAME, BAD_CONNECTION_STRING), before connecting', async () => {
    const connectionsBefore = recorder.connections;
    for (const schema of [42, ['remit'], null]) {
      expect(await openWith({ schema })).toMatchObject({ code: 'REMIT_STORE', storeCode: 'BAD_SCHEMA_NAME', field: 'schema' });
    }
    for (const connectionString of [42, null, { host: 'x' }]) {
      expect(await openWith({ connectionString })).toMatchObject({ code: 'REMIT_STORE', storeCode: 'BAD_CONNECTION_STRING', field: 'connectionString' });
    }
    expect(await openWith({ connectionString: undefined, pool: { connectionString: 7 } })).toMatchObject({ storeCode: 'BAD_CONNECTION_STRING' });
    expect(recorder.connections).toBe(connectionsBefore);
  });

  it('the options object itself: not an object, or an unknown key, is refused', async () => {
    await expect(PostgresStore.open(null as never)).rejects.toMatchObject({ code: 'REMIT_OPTION_INVALID', option: 'options' });
    await expect(PostgresStore.open({ ...base(), statementTimeout: 5 } as never)).rejects.toMatchObject({ code: 'REMIT_OPTION_INVALID', option: 'statementTimeout' });
  });
});

describe('openPostgresStore: an accepted value reaches the connection', () => {
  it('(property) timeouts, pool size and migrate mode within their ranges are taken; statement_timeout and application_name are what was asked for', async () => {
    const ms = fc.oneof(fc.constantFrom(0, 1, 10_000, MAX_MS), fc.integer({ min: 0, max: MAX_MS }));
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            statementTimeoutMs: ms,
            clientTimeoutMs: ms,
            resolveTimeoutMs: ms,
            maxConnections: fc.integer({ min: 1, max: 1000 }),
            migrate: fc.constantFrom('apply' as const, 'verify' as const),
            applicationName: fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !s.includes('\u0000')),
          },
          { requiredKeys: [] },
        ),
        async (options) => {
          const seen = recorder.startups.length;
          const error = await openWith(options);
          // The fake server hung up: the store reports the server unavailable (retryBudgetMs 0).
          expect(error).toBeInstanceOf(StoreError);
          expect(error).toMatchObject({ storeCode: 'UNAVAILABLE' });
          const startup = recorder.startups[seen]!;
          expect(startup).toBeDefined();
          const statementTimeoutMs = options.statementTimeoutMs ?? 10_000;
          expect(startup['statement_timeout']).toBe(statementTimeoutMs === 0 ? undefined : String(statementTimeoutMs));
          expect(startup['application_name']).toBe(options.applicationName ?? 'remit');
        },
      ),
      { numRuns: 25, timeout: 5000 },
    );
  });

  it('the defaults: statement_timeout 10000, application_name remit', async () => {
    const seen = recorder.startups.length;
    expect(await openWith({})).toMatchObject({ storeCode: 'UNAVAILABLE' });
    expect(recorder.startups[seen]).toMatchObject({ statement_timeout: '10000', application_name: 'remit', user: 'remit', database: 'remit_test' });
  });
});

/**
 * A server that completes the startup (AuthenticationOk, ReadyForQuery) and then never answers a
 * query: what a network that goes silent looks like to the client. How long a query waits for its
 * reply is then the client-side timeout, seen from outside.
 */
async function silentServer(): Promise<{ port: number; hangUp(): void; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    let started = false;
    socket.on('data', () => {
      if (started) return; // queries: never answered
      started = true;
      const authOk = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]);
      const ready = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);
      socket.write(Buffer.concat([authOk, ready]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    hangUp: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('openPostgresStore: the client-side timeout derived from the statement timeout fits a timer', () => {
  it('statementTimeoutMs at its maximum: the reply is waited for (the derived client timeout is capped, not overflowed to 1 ms)', async () => {
    const silent = await silentServer();
    try {
      const settled: { error?: unknown; at?: number } = {};
      const started = Date.now();
      const opening = openPostgresStore({ connectionString: `postgres://remit@127.0.0.1:${silent.port}/remit_test`, retryBudgetMs: 0, statementTimeoutMs: MAX_MS })
        .then((store) => store.close(), (error: unknown) => {
          settled.error = error;
          settled.at = Date.now() - started;
        });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(settled.at).toBeUndefined(); // still waiting for the silent server's reply
      silent.hangUp();
      await opening;
      expect(settled.error).toBeInstanceOf(StoreError);
    } finally {
      await silent.close();
    }
  });

  it('an explicit clientTimeoutMs bounds the wait for a reply', async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      const error = await openPostgresStore({ connectionString: `postgres://remit@127.0.0.1:${silent.port}/remit_test`, retryBudgetMs: 0, clientTimeoutMs: 300 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      silent.hangUp();
      await silent.close();
    }
  });
});
