// The README's quickstart, as a file that runs. In a service: `node quickstart.mjs` after
// installing the two packed tarballs and zod (README, "In a Node service"); in this repository: `bash scripts/tsx.sh examples/quickstart/quickstart.mjs`.
import { z } from 'zod';
import { createRemit, END, openSqliteStore, workflow } from 'remit';

// Stands in for your email provider's client; pass the idempotency key on, so a retry after a
// crash is applied once.
const mailer = { send: async (to, idempotencyKey) => ({ messageId: `msg-${idempotencyKey}` }) };

const welcome = workflow({ name: 'welcome', version: '1', state: z.object({ email: z.email(), messageId: z.string().optional() }) })
  .effect('sendWelcome', {
    run: (s, { idempotencyKey }) => mailer.send(s.email, idempotencyKey),
    apply: (_s, sent) => ({ messageId: sent.messageId }),
    next: END,
  })
  .build();

const remit = await createRemit({
  store: openSqliteStore('./.remit/app.db'),
  workflows: [welcome],
  core: process.env.REMIT_CORE === 'reference' ? 'reference' : 'wasm', // the Wasm core is the default
});
await remit.recoverAll(); // at start-up: finish the runs a crash interrupted
const run = await remit.start(welcome, { email: 'ada@example.com' });
console.log(run.status, run.state); // completed { email: 'ada@example.com', messageId: 'msg-…' }
await remit.close();
