/**
 * How openPostgresStore connects (docs/postgres.md, "Connecting"), against the test server: every
 * socket-folder form pg takes opens the store, credentials with an empty host included, and the
 * store's description names the socket folder as the host, never the password; TLS asked of a
 * server without it fails at once with SSL_NOT_SUPPORTED naming the option that asked, instead of
 * being retried for the whole budget as an unreachable server; a schema named pg_... is refused
 * before connecting. Needs a server (REMIT_PG_URL) started by scripts/pg.sh, whose socket folder
 * is $REMIT_PG_DIR/run (default /var/tmp/remit-pg-<port>/run).
 */

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { StoreError } from '../errors.js';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { PostgresStore, type PostgresStoreOptions } from './postgres.js';

/** The test server's socket folder, where scripts/pg.sh puts it. */
function socketFolder(url: string): { folder: string; port: string } {
  const port = new URL(url).port || '5432';
  const folder = path.join(process.env.REMIT_PG_DIR ?? `/var/tmp/remit-pg-${port}`, 'run');
  if (!fs.existsSync(path.join(folder, `.s.PGSQL.${port}`))) {
    throw new Error(`no socket .s.PGSQL.${port} in ${folder}: these tests need the server of scripts/pg.sh (set REMIT_PG_DIR as it was started with)`);
  }
  return { folder, port };
}

describePg('postgres: connecting', (url) => {
  const schemas = new Set<string>();
  afterAll(() => dropSchemas(url, schemas));
  const { username, password, pathname } = new URL(url);
  const user = decodeURIComponent(username);
  const database = decodeURIComponent(pathname.slice(1));

  async function openedDescription(options: PostgresStoreOptions): Promise<string> {
    const schema = freshSchemaName();
    schemas.add(schema);
    const store = await PostgresStore.open({ retryBudgetMs: 1000, ...options, schema });
    try {
      expect(store.description.endsWith(`#${schema}`)).toBe(true);
      return store.description.slice(0, -(schema.length + 1));
    } finally {
      await store.close();
    }
  }

  it('opens through the socket folder in every form pg takes, and describes the folder as the host, never the password', async () => {
    const { folder, port } = socketFolder(url);
    const encoded = encodeURIComponent(folder);
    const expected = `postgres://${user}@${folder}:${port}/${database}`;
    const forms: [string, PostgresStoreOptions][] = [
      // credentials with an empty host, which the URL parser alone refuses
      ['credentials, empty host', { connectionString: `postgres://${username}:${password}@/${database}?host=${folder}&port=${port}` }],
      ['user, empty host, password parameter', { connectionString: `postgres://${username}@/${database}?host=${folder}&port=${port}&password=${password}` }],
      ['no authority', { connectionString: `postgres:///${database}?host=${folder}&port=${port}&user=${username}&password=${password}` }],
      ['percent-encoded folder as the host', { connectionString: `postgres://${username}:${password}@${encoded}:${port}/${database}` }],
      ['the folder and the database', { connectionString: `${folder} ${database}`, pool: { user, password: decodeURIComponent(password), port: Number(port) } }],
      ['socket: scheme', { connectionString: `socket://${username}:${password}@${folder}?db=${database}`, pool: { port: Number(port) } }],
      ['pool.host', { pool: { host: folder, port: Number(port), user, password: decodeURIComponent(password), database } }],
    ];
    for (const [form, options] of forms) {
      const description = await openedDescription(options).catch((e: unknown) => `${form}: ${String(e)}`);
      expect(description, form).toBe(expected);
      expect(description, form).not.toMatch(/:[^@/]*@|password/); // the user's name is the password here
    }
  });

  it('the socket folder as a connection string alone is described with its folder even when nothing answers there', async () => {
    const error = await PostgresStore.open({ connectionString: '/nonexistent/socket-folder', retryBudgetMs: 0, schema: 'remit_t_socket' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ storeCode: 'UNAVAILABLE', store: 'postgres:///nonexistent/socket-folder/#remit_t_socket' });
  });

  // verify-full, not require: pg warns once per process that it reads require as verify-full.
  // Either way pg asks the server for TLS first, and the server answers that it has none.
  it('sslmode against a server without TLS fails at once with SSL_NOT_SUPPORTED naming connectionString, not UNAVAILABLE after the retry budget', async () => {
    const started = Date.now();
    const error = await PostgresStore.open({ connectionString: `${url}?sslmode=verify-full`, schema: freshSchemaName(), retryBudgetMs: 15_000 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(10_000); // under the 15 s retry budget: not retried
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ code: 'REMIT_STORE', storeCode: 'SSL_NOT_SUPPORTED', operation: 'open', field: 'connectionString' });
    expect((error as Error).message).toMatch(/does not support SSL connections.*not retried/);
  });

  it('pool.ssl against a server without TLS is SSL_NOT_SUPPORTED naming pool.ssl', async () => {
    const started = Date.now();
    const error = await PostgresStore.open({ connectionString: url, pool: { ssl: { rejectUnauthorized: false } }, schema: freshSchemaName(), retryBudgetMs: 15_000 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(10_000); // under the 15 s retry budget: not retried
    expect(error).toMatchObject({ storeCode: 'SSL_NOT_SUPPORTED', field: 'pool.ssl' });
  });

  it('a schema named pg_... is BAD_SCHEMA_NAME before connecting, saying PostgreSQL reserves the prefix', async () => {
    for (const schema of ['pg_remit', 'pg_']) {
      const error = await PostgresStore.open({ connectionString: url, schema }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'REMIT_STORE', storeCode: 'BAD_SCHEMA_NAME', field: 'schema' });
      expect((error as Error).message).toMatch(/must not start with pg_: PostgreSQL reserves the prefix/);
    }
    // pg without the underscore, or pg_ inside a name, is an ordinary name.
    for (const schema of [freshSchemaName('pgx'), freshSchemaName('my_pg')]) {
      schemas.add(schema);
      await (await PostgresStore.open({ connectionString: url, schema })).close();
    }
  });
});
