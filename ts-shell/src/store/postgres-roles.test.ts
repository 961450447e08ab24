/**
 * The PostgreSQL store as an operator deploys it: a user that may not change the schema, holding
 * exactly the grants docs/postgres.md ("Permissions") lists for `migrate: 'verify'`, runs every
 * operation a service and its operator need (start with stored summaries, a fresh process's
 * resume, continue, scrub, repair of a torn record); and a server that closes idle sessions
 * (idle_session_timeout) costs no operation. (A statement that meets such a closed session fails
 * with SQLSTATE 57P05, classified as a lost connection: postgres-failures.test.ts; pg's pool
 * usually drops the closed client first, so this file rarely reaches that path.)
 * Needs a server whose test user may create roles (scripts/pg.sh grants CREATEROLE).
 */

import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createRemit } from '../remit.js';
import { END, workflow } from '../workflow/workflow.js';
import { describePg, dropSchemas, freshSchemaName } from '../../test-support/postgres-test-env.js';
import { PostgresStore } from './postgres.js';

const counter = workflow({ name: 'counter', version: '1', state: z.object({ n: z.number().int(), limit: z.number().int(), approved: z.boolean().optional() }) })
  .pure('count', { run: (s) => ({ n: s.n + 1 }), next: (s) => (s.n >= s.limit ? 'approve' : 'count') })
  .interrupt('approve', { resume: z.object({ ok: z.boolean() }), apply: (_s, v) => ({ approved: v.ok }), next: END })
  .build();

/** The grants docs/postgres.md lists for a user that opens the store with `migrate: 'verify'`. */
const DOCUMENTED_GRANTS = (schema: string, role: string) => [
  `GRANT USAGE ON SCHEMA ${schema} TO ${role}`,
  `GRANT SELECT, INSERT, UPDATE ON ${schema}.runs TO ${role}`,
  `GRANT SELECT, INSERT, DELETE ON ${schema}.records TO ${role}`,
  `GRANT SELECT, INSERT, UPDATE, DELETE ON ${schema}.summaries TO ${role}`,
  `GRANT SELECT ON ${schema}.schema_migrations TO ${role}`,
];

describePg('postgres: roles and sessions as deployed', (url) => {
  const schemas = new Set<string>();
  const roles: string[] = [];
  afterAll(async () => {
    await dropSchemas(url, schemas);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const database = new URL(url).pathname.slice(1);
    // The schema's grants went with the schema; the database's must be revoked before the drop.
    for (const role of roles) {
      await admin.query(`REVOKE ALL ON DATABASE ${database} FROM ${role}`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
    }
    await admin.end();
  });

  it('a verify-only user with the documented grants runs, resumes in a fresh store, scrubs and repairs', async () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    const owner = await PostgresStore.open({ connectionString: url, schema, maxConnections: 2 });
    await owner.close();
    const role = `${schema}_app`;
    roles.push(role);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app'`);
    const database = new URL(url).pathname.slice(1);
    await admin.query(`GRANT CONNECT ON DATABASE ${database} TO ${role}`);
    for (const grant of DOCUMENTED_GRANTS(schema, role)) await admin.query(grant);
    const appUrl = new URL(url);
    appUrl.username = role;
    appUrl.password = 'app';
    const open = () => PostgresStore.open({ connectionString: appUrl.toString(), schema, migrate: 'verify', maxConnections: 2 });

    // 70 appends: stored summaries are written and read back.
    const first = await createRemit({ store: await open(), workflows: [counter], core: 'reference', groupPureSteps: false });
    const parked = await first.start(counter, { n: 0, limit: 70 }, { runId: 'long' });
    expect(parked.status).toBe('parked');
    await first.close();
    const fresh = await createRemit({ store: await open(), workflows: [counter], core: 'reference' });
    expect((await fresh.resume('long', parked.interrupt!.id, { ok: true })).status).toBe('completed');
    expect(await fresh.scrub('long')).toMatchObject({ damage: null, summaryAgrees: true, logStatus: 'completed' });

    // A torn last record (a hand edit by the owner), repaired by the application's user.
    const torn = await fresh.start(counter, { n: 0, limit: 2 }, { runId: 'torn' });
    expect(torn.status).toBe('parked');
    await admin.query(`UPDATE ${schema}.records SET bytes = substring(bytes from 1 for 6) WHERE run_id = 'torn' AND seq = (SELECT max(seq) FROM ${schema}.records WHERE run_id = 'torn')`);
    await admin.end();
    const repaired = await fresh.repair('torn');
    expect(repaired.removedSeq).not.toBeNull();
    expect((await fresh.continueRun('torn')).status).toBe('parked');
    await fresh.close();
  });

  it('a server that closes idle sessions (57P05) costs no operation', async () => {
    const schema = freshSchemaName();
    schemas.add(schema);
    const store = await PostgresStore.open({ connectionString: url, schema, maxConnections: 2, pool: { options: '-c idle_session_timeout=100' } });
    const remit = await createRemit({ store, workflows: [counter], core: 'reference', groupPureSteps: false });
    for (let i = 0; i < 4; i++) {
      const parked = await remit.start(counter, { n: 0, limit: 2 }, { runId: `idle-${i}` });
      // Idle past the server's timeout: the pooled connections are closed under the store.
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await remit.resume(`idle-${i}`, parked.interrupt!.id, { ok: true })).status).toBe('completed');
    }
    await remit.close();
  });
});
