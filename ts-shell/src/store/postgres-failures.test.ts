/**
 * How a PostgreSQL statement's failure is classified (postgres-failures.ts), which decides whether
 * a read is retried and a write resolved: a session the server closed is a lost connection, never
 * a fatal error, whichever way it was closed. No server needed.
 */

import { describe, expect, it } from 'vitest';
import { classifyStatementFailure } from './postgres-failures.js';

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
