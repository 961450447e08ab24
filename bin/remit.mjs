#!/usr/bin/env node
// The `remit` command: registers tsx's ESM loader so the TypeScript sources run as they are
// (no build step), then hands over to ts-shell/src/cli/main.ts.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../ts-shell/src/cli/main.ts');
await runCli(process.argv);
