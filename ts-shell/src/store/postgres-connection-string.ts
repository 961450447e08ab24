/**
 * Connection strings as node-postgres reads them, for the store's check of `connectionString` and
 * for its description.
 *
 * pg reads a connection string with the `parse` of its dependency pg-connection-string; the store
 * calls that same parse, resolved from pg's own location (so it is the very copy pg uses, under
 * any package manager, with nothing for a service to install beyond pg). What pg takes besides
 * `postgres://user:password@host:port/database?param=value`: a socket folder (`/var/run/postgresql`,
 * optionally followed by a space and the database); `socket:/folder?db=database`; an empty host
 * with the folder in `host=` (`postgres://user:password@/database?host=/folder`), credentials
 * included; a socket folder percent-encoded as the host. Query parameters `host`, `port` and
 * `user` win over the URL's own parts. On top of pg, the store refuses what pg would misread
 * without a word (see parseConnectionString).
 */

import { createRequire } from 'node:module';

/** What a connection string names; every field is what pg would use from the string (empty: not given). */
export interface ConnectionTarget {
  user?: string | undefined;
  host?: string | undefined;
  port?: string | undefined;
  database?: string | undefined;
  /** Whether the string carries TLS settings (ssl, sslmode, sslcert, ...): then it decides TLS. */
  tls?: boolean;
}

/** The part of pg-connection-string's result the store reads. */
interface PgConnectionOptions {
  user?: string | null;
  host?: string | null;
  port?: string | number | null;
  database?: string | null;
  ssl?: unknown;
  sslmode?: string | null;
}

type PgParse = (text: string) => PgConnectionOptions;
let pgParse: PgParse | undefined;

/**
 * pg's own parse (pg-connection-string, pg's dependency), resolved through pg. Not found (a bundle
 * that left it out, pg not installed): ParserMissing, which the store reports as such, never as a
 * connection string it refuses.
 */
function parseAsPg(text: string): PgConnectionOptions {
  if (pgParse === undefined) {
    try {
      const fromPg = createRequire(createRequire(import.meta.url).resolve('pg'));
      pgParse = (fromPg('pg-connection-string') as { parse: PgParse }).parse;
    } catch (error) {
      throw new ParserMissing(error);
    }
  }
  return pgParse(text);
}

/** pg's connection-string parser could not be loaded (parseAsPg). */
export class ParserMissing {
  constructor(readonly cause: unknown) {}
}

/** The schemes the store takes: pg reads anything else as a host name (a typo would be retried). */
const SCHEME = /^(postgres|postgresql|socket):/i;

/** The options through which a connection string asks for (or refuses) TLS in pg. */
const TLS_OPTIONS = ['ssl', 'sslmode', 'sslcert', 'sslkey', 'sslrootcert', 'sslnegotiation'];

/**
 * The target a connection string names, or undefined when the store refuses it: pg refuses it
 * (throws); or it is neither a socket folder nor of scheme postgres:, postgresql: or socket: (pg
 * would take `host=... port=...`, `mysql://...` or a typo as a host name and fail only at
 * connect, after the retries); or an '@/' inside the password (`user:p@/ss@host/db`), whose tail pg
 * would take as the database name and the store would print in its description (percent-encoded,
 * `%40`, it is no problem).
 */
export function parseConnectionString(text: string): ConnectionTarget | undefined {
  if (!text.startsWith('/') && !SCHEME.test(text)) return undefined;
  if (/^[a-z]+:\/\/[^/?#]*@\/[^?#]*@/i.test(text)) return undefined;
  let parsed: PgConnectionOptions;
  try {
    parsed = parseAsPg(text);
  } catch (error) {
    if (error instanceof ParserMissing) throw error;
    return undefined;
  }
  // Only the parts the string gives: the others stay the pool's (describeTarget spreads this over them).
  const target: ConnectionTarget = {};
  for (const key of ['user', 'host', 'port', 'database'] as const) {
    const value = parsed[key];
    if (value !== null && value !== undefined && value !== '') target[key] = String(value);
  }
  return text.startsWith('/') ? { host: target.host, database: target.database } : { ...target, tls: TLS_OPTIONS.some((o) => hasTlsOption(text, o)) };
}

/** Whether the query of `text` names TLS option `name` (pg's parse turns some of them into `ssl`). */
function hasTlsOption(text: string, name: string): boolean {
  const query = text.indexOf('?');
  return query >= 0 && new URLSearchParams(text.slice(query + 1)).has(name);
}

/**
 * "postgres://user@host:port/database#schema", never the password: a socket folder stands where
 * the host does, an IPv6 address in brackets; parts not given are left out.
 */
export function formatTarget(target: ConnectionTarget, schema: string): string {
  const { user, host = '', port, database = '' } = target;
  const hostText = host.includes(':') && !host.startsWith('/') ? `[${host}]` : host;
  return `postgres://${user ? `${user}@` : ''}${hostText}${port ? `:${port}` : ''}/${database}#${schema}`;
}
