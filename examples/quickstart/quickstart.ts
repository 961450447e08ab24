// The quickstart of docs/guide.md, as a file that runs: npx tsx examples/quickstart/quickstart.ts
import { z } from 'zod';
import { createRemit, END, openSqliteStore, workflow } from 'remit';

const mailer = { send: async (to: string, idempotencyKey: string) => ({ messageId: `msg-${idempotencyKey}` }) };

const welcome = workflow({ name: 'welcome', version: '1', state: z.object({ email: z.email(), messageId: z.string().optional() }) })
  .effect('sendWelcome', { run: (s, { idempotencyKey }) => mailer.send(s.email, idempotencyKey), apply: (_s, sent) => ({ messageId: sent.messageId }), next: END })
  .build();

const remit = await createRemit({ store: openSqliteStore('./.remit/quickstart.db'), workflows: [welcome], core: process.env['REMIT_CORE'] === 'reference' ? 'reference' : 'wasm' });
await remit.recoverAll(); // at start-up: finish the runs a crash interrupted
const run = await remit.start(welcome, { email: 'ada@example.com' });
console.log(run.status, run.state); // completed { email: 'ada@example.com', messageId: 'msg-welcome-…:sendWelcome:1' }
await remit.close();
