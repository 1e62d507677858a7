import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'node',
    include: ['{parsers,analysis,symbolize,cli,node-io,app,renderer,tools}/**/*.test.ts'],
    testTimeout: 60_000,
  },
});
