import { defineConfig } from 'vitest/config';

// Inside the repository every workspace imports the library ('remit', 'remit/core', ...) from its
// TypeScript sources: the `remit-source` export condition of ts-shell/package.json. Vitest resolves
// with it, and child processes that tests spawn (`node --import tsx ...`) inherit it through
// NODE_OPTIONS. Published consumers never set it and get dist/.
const SOURCE_CONDITION = '--conditions=remit-source';
if (!(process.env['NODE_OPTIONS'] ?? '').includes(SOURCE_CONDITION)) {
  process.env['NODE_OPTIONS'] = `${process.env['NODE_OPTIONS'] ?? ''} ${SOURCE_CONDITION}`.trim();
}

// Tests live beside the code they test (`*.test.ts`). Child-process and store tests are slow on
// two cores, so the timeouts are generous; property tests bound their own run counts.
export default defineConfig({
  resolve: { conditions: ['remit-source'] },
  ssr: { resolve: { conditions: ['remit-source'], externalConditions: ['remit-source'] } },
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', 'wasm/pkg/**', 'target/**', 'ts-shell/dist/**'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
