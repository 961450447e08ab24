/**
 * The library's boundary, enforced by `ts-shell/boundaries.test.ts` (part of `npm test`; alone:
 * `npx vitest run ts-shell/boundaries.test.ts`), with a canary for each rule. Paths are relative
 * to the repository root. The library is ts-shell/src without its tests; `remit/testing`
 * (ts-shell/src/testing) is published but never used by the library.
 */
const LIBRARY = '^ts-shell/src/';
const NOT_LIBRARY = ['\\.test\\.ts$', '^ts-shell/src/testing/'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'library-imports-no-harness',
      comment: 'The library imports nothing from tests, test support, the harness, examples, benchmarks, equivalence or proofs.',
      severity: 'error',
      from: { path: LIBRARY, pathNot: NOT_LIBRARY },
      to: { path: ['\\.test\\.ts$', '^ts-shell/test-support/', '^conformance/', '^examples/', '^bench/', '^equivalence/', '^proofs/', '^scripts/'] },
    },
    {
      name: 'library-imports-no-testing-entry',
      comment: 'remit/testing serves users\' tests; the library never depends on it.',
      severity: 'error',
      from: { path: LIBRARY, pathNot: NOT_LIBRARY },
      to: { path: '^ts-shell/src/testing/' },
    },
    {
      name: 'library-imports-no-test-frameworks',
      comment: 'No vitest, fast-check or tinybench in the library (remit/testing/store-contract is the one vitest entry).',
      severity: 'error',
      from: { path: LIBRARY, pathNot: [...NOT_LIBRARY] },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-peer', 'npm-optional', 'npm-no-pkg', 'npm-unknown'], path: ['(^|/)node_modules/(vitest|@vitest|fast-check|tinybench)/'] },
    },
    {
      name: 'testing-entry-imports-no-harness',
      comment: 'remit/testing is published: its code imports nothing of the repository outside the library (its own tests may use test support).',
      severity: 'error',
      from: { path: '^ts-shell/src/testing/', pathNot: '\\.test\\.ts$' },
      to: { path: ['\\.test\\.ts$', '^ts-shell/test-support/', '^conformance/', '^examples/', '^bench/', '^equivalence/', '^proofs/', '^scripts/'] },
    },
    {
      name: 'testing-vitest-only-in-store-contract',
      severity: 'error',
      from: { path: '^ts-shell/src/testing/', pathNot: ['^ts-shell/src/testing/store-contract\\.ts$', '\\.test\\.ts$'] },
      to: { path: '(^|/)node_modules/(vitest|@vitest)/' },
    },
    {
      name: 'core-is-pure',
      comment: 'The core folder imports only itself, errors.ts (which imports only display.ts, which imports nothing) and known-keys.ts (which imports nothing), and Node built-ins to load the Wasm module.',
      severity: 'error',
      from: { path: '^ts-shell/src/core/', pathNot: '\\.test\\.ts$' },
      to: { pathNot: ['^ts-shell/src/core/', '^ts-shell/src/errors\\.ts$', '^ts-shell/src/known-keys\\.ts$', '^node:', '^(module|url)$'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'pg-only-in-the-postgres-store',
      severity: 'error',
      from: { path: LIBRARY, pathNot: ['^ts-shell/src/store/postgres[^/]*\\.ts$', ...NOT_LIBRARY] },
      to: { path: '(^|/)node_modules/pg/' },
    },
    {
      name: 'other-workspaces-use-the-package',
      comment: 'Outside ts-shell, the library is imported as remit, remit/core, remit/postgres or remit/testing, never by a relative path into its sources (test files may share ts-shell/test-support).',
      severity: 'error',
      from: { path: '^(conformance|bench|equivalence|examples|proofs|scripts)/' },
      to: { path: '^ts-shell/(src|dist)/', dependencyTypes: ['local'] },
    },
    {
      name: 'no-circular-in-library',
      comment: 'Cycles through type-only imports are erased at compile time and allowed.',
      severity: 'error',
      from: { path: LIBRARY, pathNot: NOT_LIBRARY },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^ts-shell/dist/', '^wasm/pkg/', '^target/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['remit-source', 'import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.json', '.d.ts'],
    },
  },
};
