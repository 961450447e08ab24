/**
 * Run inside a host namespace: try each PostgreSQL URL given on the command line and print one
 * JSON line per URL: {url, ok, clientAddr?, serverAddr?, error?}. The password is masked.
 * Used by hosts.ts to show that from a host the loopback URL fails and the bridge URL works.
 *   ip netns exec remit-h1 node --import tsx conformance/hosts/probe.ts URL [URL...]
 */
import pg from 'pg';

const CONNECT_TIMEOUT_MS = 3_000;

function masked(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}

async function probe(url: string): Promise<Record<string, unknown>> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    const r = await client.query<{ client: string | null; server: string | null }>(
      'SELECT host(inet_client_addr()) AS client, host(inet_server_addr()) AS server',
    );
    return { url: masked(url), ok: true, clientAddr: r.rows[0]?.client ?? null, serverAddr: r.rows[0]?.server ?? null };
  } catch (e) {
    const err = e as { code?: string; message?: string };
    return { url: masked(url), ok: false, error: `${err.code ?? 'ERROR'}: ${err.message ?? String(e)}` };
  } finally {
    await client.end().catch(() => undefined);
  }
}

for (const url of process.argv.slice(2)) {
  process.stdout.write(`${JSON.stringify(await probe(url))}\n`);
}
