import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'node',
    include: ['{parsers,analysis,symbolize,cli,node-io,app,renderer,tools,export,session,report}/**/*.test.ts'],
    testTimeout: 60_000,
  },
});
