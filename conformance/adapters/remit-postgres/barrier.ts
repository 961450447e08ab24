/**
 * A barrier kept by the PostgreSQL server, for the cross-host cells: resumers on different hosts
 * are released at the same moment by the server itself, not by timing.
 *
 * One adapter process (the harness's primary) closes the barrier by taking the session-level
 * advisory lock `key` exclusively (`hold`). Every resumer, already connected, asks for the same
 * lock in shared mode and so waits in the server (`pass`). The harness asks the primary how many
 * are waiting (`count`, from pg_locks) until all k are, then the primary releases the lock
 * (`release`) and the server grants every waiting shared request at once.
 *
 * If the primary dies its session ends and the server drops the lock: a lost harness process never
 * leaves resumers waiting for ever.
 */
import pg from 'pg';

/** Keys are non-negative 31-bit integers (pg_locks: classid 0, objid key, objsubid 1). */
export function checkBarrierKey(key: unknown): number {
  if (typeof key !== 'number' || !Number.isSafeInteger(key) || key < 0 || key > 0x7fff_ffff) {
    throw new TypeError(`barrier key must be an integer in 0..2^31-1, got ${JSON.stringify(key)}`);
  }
  return key;
}

/** A waiter gives up after this long (the harness's own request timeout is shorter). */
const PASS_TIMEOUT_MS = 60_000;

export class AdvisoryBarrier {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;

  constructor(private readonly url: string) {}

  /** One connection per process, opened on first use and kept (a warm connection is part of the barrier's point). */
  private async session(): Promise<pg.Client> {
    if (this.client !== null) return this.client;
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5_000, application_name: `remit-barrier-${process.pid}` });
      await client.connect();
      await client.query(`SET statement_timeout = ${PASS_TIMEOUT_MS}`);
      client.on('error', () => {
        this.client = null;
        this.connecting = null;
      });
      this.client = client;
      return client;
    })();
    try {
      return await this.connecting;
    } catch (e) {
      this.connecting = null;
      throw e;
    }
  }

  /** Opens the connection now, so that `pass` later costs no connection set-up. */
  async connect(): Promise<void> {
    await this.session();
  }

  async hold(key: number): Promise<void> {
    await (await this.session()).query('SELECT pg_advisory_lock($1::bigint)', [checkBarrierKey(key)]);
  }

  /** Sessions waiting for the barrier `key` right now. */
  async count(key: number): Promise<number> {
    const r = await (await this.session()).query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_locks
        WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = 0 AND objid = $1::bigint::oid AND objsubid = 1`,
      [checkBarrierKey(key)],
    );
    return Number(r.rows[0]?.n ?? 0);
  }

  async release(key: number): Promise<void> {
    const r = await (await this.session()).query<{ released: boolean }>('SELECT pg_advisory_unlock($1::bigint) AS released', [checkBarrierKey(key)]);
    if (r.rows[0]?.released !== true) throw new Error(`barrier ${key} was not held by this process`);
  }

  /** Waits until the barrier `key` is open (or was never closed), then returns at once. */
  async pass(key: number): Promise<void> {
    const c = await this.session();
    await c.query('SELECT pg_advisory_lock_shared($1::bigint)', [checkBarrierKey(key)]);
    await c.query('SELECT pg_advisory_unlock_shared($1::bigint)', [key]);
  }

  async close(): Promise<void> {
    const c = this.client;
    this.client = null;
    this.connecting = null;
    if (c !== null) await c.end().catch(() => undefined);
  }
}
