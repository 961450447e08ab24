/**
 * How a PostgreSQL statement's failure is classified (postgres-failures.ts), which decides whether
 * a read is retried and a write resolved: a session the server closed is a lost connection, never
 * a fatal error, whichever way it was closed; a server without TLS asked for it is never retried;
 * a host name that does not resolve is. No server needed.
 */

import { describe, expect, it } from 'vitest';
import { classifyConnectFailure, classifyStatementFailure, isRetryable } from './postgres-failures.js';

const withCode = (code: string) => Object.assign(new Error(`server error ${code}`), { code });

describe('classifyStatementFailure', () => {
  it.each([
    ['57P01', 'connection_lost'], // admin_shutdown: pg_terminate_backend, a fast shutdown
    ['57P02', 'connection_lost'], // crash_shutdown
    ['57P05', 'connection_lost'], // idle_session_timeout: the server closed an idle pooled session
    ['08006', 'connection_lost'], // connection_failure
    ['57P03', 'unavailable'], // cannot_connect_now
    ['53300', 'unavailable'], // too_many_connections
    ['57014', 'timeout'], // query_canceled (statement_timeout)
    ['40001', 'transient'], // serialization_failure
    ['23505', 'conflict'], // unique_violation
    ['42501', 'fatal'], // insufficient_privilege: retrying cannot help
  ])('SQLSTATE %s is %s', (code, kind) => {
    expect(classifyStatementFailure(withCode(code))).toBe(kind);
  });
});

describe('classifyConnectFailure', () => {
  it('a server answering that it does not support SSL is not retried (the answer never changes)', () => {
    const kind = classifyConnectFailure(new Error('The server does not support SSL connections'));
    expect(kind).toBe('ssl_not_supported');
    expect(isRetryable(kind)).toBe(false);
  });

  it.each([
    ['ENOTFOUND', 'getaddrinfo ENOTFOUND db.internal'], // the name may resolve once its service is up
    ['EAI_AGAIN', 'getaddrinfo EAI_AGAIN db.internal'],
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'],
  ])('%s is unavailable, retried', (code, message) => {
    const kind = classifyConnectFailure(Object.assign(new Error(message), { code }));
    expect(kind).toBe('unavailable');
    expect(isRetryable(kind)).toBe(true);
  });

  it('any other TLS failure of pg ("There was an error establishing an SSL connection") is still retried', () => {
    expect(classifyConnectFailure(new Error('There was an error establishing an SSL connection'))).toBe('unavailable');
  });
});
