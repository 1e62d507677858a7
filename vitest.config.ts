import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'node',
    include: ['{core,node,app,renderer,tools,native-tools,fixtures}/**/*.test.ts'],
    testTimeout: 60_000,
    // one temporary folder per run, removed at the end (HEAPLENS_KEEP_TEST_TMP=1 keeps it)
    globalSetup: ['tools/test-tmp.ts'],
    // Hermetic: no symbol results from earlier runs (~/.cache/heaplens) can hide a regression.
    env: { HEAPLENS_SYMBOL_CACHE: '0' },
  },
});
