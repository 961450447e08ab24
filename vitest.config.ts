import { defineConfig } from 'vitest/config';

// Tests live beside the code they test (`*.test.ts`). Child-process and store tests are slow on
// two cores, so the timeouts are generous; property tests bound their own run counts.
export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'wasm/pkg/**', 'target/**'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
