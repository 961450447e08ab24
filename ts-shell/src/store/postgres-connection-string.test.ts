/**
 * The store's reading of a connection string (postgres-connection-string.ts, through pg's own parse) against pg: a
 * string pg takes is read as pg reads it (user, host, port, database, as a pg.Client built from
 * it holds them), one pg refuses is refused, and the forms the store refuses on purpose (another
 * scheme, a libpq keyword string, an '@' after an empty host) stay refused. No server needed.
 */

import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { formatTarget, parseConnectionString } from './postgres-connection-string.js';

/** What pg connects to for `connectionString`, or 'refused' when pg throws on it. */
function pgReading(connectionString: string): { user: string; host: string; port: number; database: string } | 'refused' {
  try {
    const client = new pg.Client({ connectionString });
    return { user: client.user!, host: client.host, port: client.port, database: client.database! };
  } catch {
    return 'refused';
  }
}

describe('parseConnectionString reads what pg reads', () => {
  // Every part given, so that pg's defaults (PGUSER, localhost, 5432) play no part.
  it.each([
    'postgres://remit:remit@127.0.0.1:54329/remit_test',
    'postgresql://remit@db.internal:5432/appdb?sslmode=disable',
    'postgres://remit:remit@/remit_test?host=/var/tmp/remit-pg-54329/run&port=54329',
    'postgres://remit@/remit_test?host=/var/tmp/remit-pg-54329/run&port=54329&password=remit',
    'postgres:///remit_test?host=/var/tmp/remit-pg-54329/run&port=54329&user=remit&password=remit',
    'postgres://remit:remit@%2Fvar%2Ftmp%2Fremit-pg-54329%2Frun:54329/remit_test',
    'postgres://remit@[::1]:5432/remit_test',
    'postgres://remit:TOP SECRET@127.0.0.1:5432/remit_test',
    'postgres://remit:pa%zz@127.0.0.1:5432/remit_test',
    'postgres://r%C3%A9mi@127.0.0.1:5432/remit_test?user=other&user=last',
  ])('%s', (connectionString) => {
    const ours = parseConnectionString(connectionString);
    const theirs = pgReading(connectionString);
    expect(theirs).not.toBe('refused');
    expect(ours).toMatchObject(theirs === 'refused' ? {} : { user: theirs.user, host: theirs.host, port: String(theirs.port), database: theirs.database });
  });

  it('reads a socket folder, alone or with its database after a space, and the socket: scheme, as pg does', () => {
    expect(parseConnectionString('/var/run/postgresql')).toEqual({ host: '/var/run/postgresql', database: undefined });
    expect(parseConnectionString('/var/run/postgresql appdb')).toEqual({ host: '/var/run/postgresql', database: 'appdb' });
    for (const connectionString of ['socket:/var/run/postgresql?db=appdb&user=remit', 'socket://remit:secret@/var/run/postgresql?db=appdb']) {
      const theirs = pgReading(connectionString);
      expect(parseConnectionString(connectionString)).toMatchObject({ host: '/var/run/postgresql', database: 'appdb', user: 'remit' });
      expect(theirs).toMatchObject({ host: '/var/run/postgresql', database: 'appdb', user: 'remit' });
    }
  });

  it.each([
    'postgres://remit:S3cr#t@localhost:5432/db', // an unencoded # cuts the URL: pg refuses it too
    'postgres://remit@localhost:port/db',
    'postgres://remit@?host=/var/run/postgresql', // an empty host with no path: pg refuses it too
    'postgres://remit@h/%E0%A4%A',
  ])('refuses %s, which pg refuses', (connectionString) => {
    expect(pgReading(connectionString)).toBe('refused');
    expect(parseConnectionString(connectionString)).toBeUndefined();
  });

  it.each([
    'not a url at all', // pg reads it as a database on a host named "base"
    'host=127.0.0.1 port=1 user=remit password=S3cret dbname=x',
    'mysql://remit@localhost/db',
    '',
    // pg takes the password's tail as the database ("ss@host/db"), which the description would show
    'postgres://remit:p@/ss@host/db',
  ])('refuses %j on purpose', (connectionString) => {
    expect(parseConnectionString(connectionString)).toBeUndefined();
  });

  it('notes TLS settings in the string (they, not pool.ssl, then decide TLS in pg)', () => {
    expect(parseConnectionString('postgres://h/db?sslmode=require')?.tls).toBe(true);
    expect(parseConnectionString('postgres://h/db?ssl=true')?.tls).toBe(true);
    expect(parseConnectionString('postgres://h/db?application_name=x')?.tls).toBe(false);
  });
});

describe('formatTarget', () => {
  it('names the user, the host (a socket folder as it is, IPv6 in brackets), the port and the database, never the password', () => {
    expect(formatTarget(parseConnectionString('postgres://remit:remit@/remit_test?host=/var/run/pg&port=54329')!, 's')).toBe('postgres://remit@/var/run/pg:54329/remit_test#s');
    expect(formatTarget(parseConnectionString('postgres://remit:secret@[::1]:5432/db')!, 's')).toBe('postgres://remit@[::1]:5432/db#s');
    expect(formatTarget(parseConnectionString('postgres://h')!, 's')).toBe('postgres://h/#s');
    expect(formatTarget({}, 's')).toBe('postgres:///#s');
  });
});
