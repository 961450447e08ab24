/**
 * REMIT on PostgreSQL through the conformance harness: a sample of the fault matrix (SIGKILL cells
 * apply: the store outlives the process) and of the concurrency matrix, every property holding,
 * every cell schema dropped afterwards. The whole matrix runs in `remit conformance --full`.
 * Needs REMIT_PG_URL (scripts/test.sh starts the project's server); fails without it unless
 * REMIT_SKIP_PG=1.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { describePg } from '../ts-shell/test-support/postgres-test-env.js';
import { dropTaggedSchemas, SCHEMA_PREFIX } from './adapters/remit-postgres/store.js';
import { runCampaign } from './harness/campaign.js';
import { findCell } from './harness/cells.js';
import { PROPERTIES } from './harness/checkers/index.js';
import { findSystem, systemsWithServerDown } from './harness/systems.js';

const CELLS = [
  'after-commit:EFFECT_INTENT@charge/sigkill',
  'in-handler-after-effect:notify/sigkill',
  'after-commit:RESUME_CLAIMED@approval/sigkill',
  'after-commit:NODE_COMPLETED@notify/store-error',
  'before-commit:FORKED/sigkill',
  'k=4/processes/different',
  'k=2/in-process/same',
].map(findCell);

async function taggedSchemas(url: string, tag: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [`${SCHEMA_PREFIX}${tag}\\_%`]);
    return r.rows.map((row) => row.nspname);
  } finally {
    await client.end();
  }
}

describePg('conformance harness: REMIT on PostgreSQL', (url) => {
  // Every schema the adapters create in this file carries this tag, so the file can check and sweep them.
  const tag = `t${randomBytes(4).toString('hex')}`;
  process.env.REMIT_CONF_PG_TAG = tag;
  afterAll(async () => {
    await dropTaggedSchemas(url, tag);
  });

  it('holds every property in sampled fault and concurrency cells, and drops its cell schemas', async () => {
    const { report, unavailable } = await runCampaign({
      mode: 'custom',
      systems: [findSystem('remit-postgres-wasm')],
      cells: CELLS,
      seed: 5,
      jobs: 1,
      shrink: false,
      shrinkBudget: 0,
    });
    expect(unavailable).toEqual([]);
    const profile = report.systems[0]!;
    expect(profile.variant).toBe('postgres/wasm');
    for (const cell of profile.cells) {
      expect(cell.applicable, `${cell.cellId}: ${cell.reason}`).toBe(true);
      for (const p of PROPERTIES) {
        expect(cell.verdicts[p].status, `${cell.cellId} ${p}: ${JSON.stringify(cell.verdicts[p])}`).toBe('holds');
      }
    }
    expect(profile.cells.find((c) => c.cellId === 'k=4/processes/different')?.saturation).toEqual({ fires: 1, k: 4 });
    // The adapters drop each cell's schema when they move on and at shutdown: nothing is left.
    expect(await taggedSchemas(url, tag)).toEqual([]);
  });
});

describePg('conformance harness: a PostgreSQL system whose server does not answer', (url) => {
  it('is named with the reason (never run, whose every cell would read as a violation); a server that answers is not', async () => {
    const def = findSystem('remit-postgres-wasm');
    expect(await systemsWithServerDown([def], { REMIT_PG_URL: url })).toEqual([]);
    // A port nothing listens on, on the same host (1: tcpmux, never a PostgreSQL server here).
    const dead = new URL(url);
    dead.port = '1';
    const down = await systemsWithServerDown([def], { REMIT_PG_URL: dead.toString() });
    expect(down).toHaveLength(1);
    expect(down[0]!.system).toBe('remit-postgres-wasm');
    expect(down[0]!.reason).toMatch(/^REMIT_PG_URL: the PostgreSQL server at its URL did not answer: /);
    expect(down[0]!.reason).not.toContain(dead.password || 'no-password');
    // Systems without a server URL are not probed.
    expect(await systemsWithServerDown([findSystem('remit-sqlite-wasm')], {})).toEqual([]);
  });
});
