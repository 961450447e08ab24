/**
 * `npm run demo [-- --kill-at <fault>] [--db <path>] [--core wasm|reference] [--json]`: run the crash
 * demo (./demo.ts). Exit code 0 when the run completed with every effect applied exactly once.
 */

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { formatFaultSpec, parseFaultSpec } from 'remit/testing';
import { DEFAULT_DEMO_KILL_AT, runDemo } from './demo.js';

const { values } = parseArgs({
  options: {
    'kill-at': { type: 'string', default: DEFAULT_DEMO_KILL_AT },
    db: { type: 'string', default: './.remit/demo.db' },
    core: { type: 'string', default: 'wasm' },
    json: { type: 'boolean', default: false },
  },
});
if (values.core !== 'wasm' && values.core !== 'reference') {
  process.stderr.write(`demo: --core must be wasm or reference, got ${JSON.stringify(values.core)}\n`);
  process.exit(2);
}
let killAt: string;
try {
  killAt = formatFaultSpec(parseFaultSpec(values['kill-at']));
} catch (error) {
  process.stderr.write(`demo: --kill-at: ${(error as Error).message} (a fault spec: point[:KIND][@node][#n], docs/guide.md "Fault points")\n`);
  process.exit(2);
}
const log = values.json ? () => {} : (line: string) => process.stdout.write(line + '\n');
const summary = await runDemo({ db: resolve(values.db), core: values.core, killAt, log });
if (values.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
process.exitCode = summary.exactlyOnce && summary.finalStatus === 'completed' ? 0 : 1;
