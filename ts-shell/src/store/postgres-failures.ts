/**
 * What a failed PostgreSQL call means for the caller: this decides whether a write may have
 * committed, and therefore whether it may be retried. Pure: no I/O.
 *
 * The rule that matters: once a write statement was handed to a live connection, losing that
 * connection leaves its outcome unknown (the server may have committed and lost only the reply).
 * Every other failure is definite: the statement did not commit.
 */

export type FailureKind =
  /** Another writer holds this seq (unique key violation): definitely not committed. */
  | 'conflict'
  /** statement_timeout or lock_timeout cancelled the statement: definitely not committed. */
  | 'timeout'
  /** The connection broke while the statement was in flight: outcome unknown until resolved. */
  | 'connection_lost'
  /** The server could not be reached, or refused new work for now: nothing was sent. */
  | 'unavailable'
  /** A serialization failure or deadlock: rolled back, safe to run again. */
  | 'transient'
  /**
   * TLS was asked for and the server answered that it has none: nothing was sent, and no retry
   * can change that answer (only the configuration, or the server's `ssl` setting, can).
   */
  | 'ssl_not_supported'
  /** Anything else (permissions, missing table, bad SQL): definitely not committed, not retried. */
  | 'fatal'
  /** The store was closed before the statement was sent (or while it waited for a connection). */
  | 'closed';

const CONNECTION_ERRNOS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

/** Messages the pg driver uses for a broken connection (it gives these errors no code). */
const LOST_MESSAGES = ['Connection terminated', 'Query read timeout', 'connection error', 'Client was closed', 'socket hang up'];

/**
 * The pg driver's message (no code) when the server answers 'N' to its SSLRequest. Its other TLS
 * failure, "There was an error establishing an SSL connection" (any other answer), stays
 * `unavailable`: that answer can be a server starting up or out of connections.
 */
const SSL_NOT_SUPPORTED_MESSAGE = 'The server does not support SSL connections';

/** The pg driver's message when a query was refused locally because the client was already broken. */
const NOT_SENT_MESSAGE = 'not queryable';

export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Classifies an error raised by a statement that was sent (or about to be sent) on a connected
 * client. Errors from acquiring a connection are `unavailable` by construction (see
 * `classifyConnectFailure`).
 */
export function classifyStatementFailure(error: unknown): FailureKind {
  const code = errorCode(error);
  if (code === '23505') return 'conflict';
  if (code === '57014' || code === '55P03') return 'timeout';
  if (code === '40001' || code === '40P01') return 'transient';
  // admin_shutdown (pg_terminate_backend, fast shutdown), crash_shutdown, idle_session_timeout
  // (the server closed a session idle past its idle_session_timeout: the next statement on that
  // pooled connection finds it gone, like a terminated backend), and class 08.
  if (code === '57P01' || code === '57P02' || code === '57P05' || code?.startsWith('08')) return 'connection_lost';
  if (code === '57P03' || code === '53300') return 'unavailable';
  if (code !== undefined && CONNECTION_ERRNOS.has(code)) return 'connection_lost';
  const message = errorMessage(error);
  if (message.includes(NOT_SENT_MESSAGE)) return 'unavailable';
  if (LOST_MESSAGES.some((m) => message.includes(m))) return 'connection_lost';
  return 'fatal';
}

/**
 * A failure to obtain a connection: nothing was sent, so it is never ambiguous. A name that does
 * not resolve (ENOTFOUND, EAI_AGAIN) is `unavailable`, retried like a refused connection: a
 * service's name may resolve a moment later, when the service or its DNS record comes up.
 */
export function classifyConnectFailure(error: unknown): FailureKind {
  // Before the pattern below, which its "connections" would match: retried, it cost the whole
  // retry budget and was then reported as an unreachable server.
  if (errorMessage(error).includes(SSL_NOT_SUPPORTED_MESSAGE)) return 'ssl_not_supported';
  const kind = classifyStatementFailure(error);
  if (kind === 'fatal') {
    // The pool's own timeout ("timeout exceeded when trying to connect") and socket errors.
    const message = errorMessage(error);
    if (/timeout|ECONN|connect|terminated|starting up|shutting down/i.test(message)) return 'unavailable';
    return 'fatal';
  }
  return kind === 'connection_lost' ? 'unavailable' : kind;
}

/** Whether a read (or a write known not to have been sent) may simply be run again. */
export function isRetryable(kind: FailureKind): boolean {
  return kind === 'connection_lost' || kind === 'unavailable' || kind === 'transient';
}

/** Exponential backoff with jitter, capped: 50, 100, 200, ... up to 1000 ms. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(1000, 50 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base / 2 + (random() * base) / 2);
}
