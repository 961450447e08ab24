import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The vitest configuration of the store-mutant run alone (store-mutants.contract.ts): the root
// configuration includes only `*.test.ts`, so the normal test run never runs the mutants.
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  resolve: { conditions: ['remit-source'] },
  ssr: { resolve: { conditions: ['remit-source'], externalConditions: ['remit-source'] } },
  test: {
    include: ['ts-shell/test-support/store-mutants.contract.ts'],
    testTimeout: 60_000,
    pool: 'forks',
  },
});
