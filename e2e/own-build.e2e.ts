// The server under test is this checkout's build: the page served is byte for byte dist/renderer/index.html (its
// asset names carry the build's content hashes). With reuseExistingServer on, a foreign `vite preview` left on the
// port used to be tested instead (issue 23); tools/e2e-own-server.test.ts runs this spec beside such a server.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from '@playwright/test';

test("the page under test is this checkout's build", async ({ request, baseURL }) => {
  const ours = readFileSync(resolve(import.meta.dirname, '..', 'dist', 'renderer', 'index.html'), 'utf8');
  const served = await (await request.get('/index.html')).text();
  expect(served, `served by ${baseURL}`).toBe(ours);
  expect(ours).toMatch(/assets\/[^"]+-[\w-]{8}\.js/);
});
