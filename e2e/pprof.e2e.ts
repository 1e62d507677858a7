// pprof profiles in the app (issue 21 items 1–2): Go's allocs profile opens counting alloc_space, its
// default_sample_type (what `go tool pprof -top` shows first: fixtures/go/allocs/allocs.pprof-top.txt), and a
// folder of two Go processes' heap profiles opens as two processes (pids from the names), counting inuse_space.
// A profile declaring types beyond the four offers them in the sample selector.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFiles, ROOT, type DropFile } from './helpers.ts';

const file = (dir: string, name: string): DropFile => {
  const p = path.join(ROOT, 'fixtures', dir, name);
  return { name, b64: readFileSync(p).toString('base64'), mtimeMs: statSync(p).mtimeMs };
};

test("Go's allocs profile opens on its default sample type, alloc_space", async ({ page }) => {
  expect(readFileSync(path.join(ROOT, 'fixtures/go/allocs/allocs.pprof-top.txt'), 'utf8')).toMatch(
    /^Type: alloc_space$/m,
  );
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', [file('go/allocs', 'allocs.pb.gz')]);
  await expect(page.getByTestId('job-info')).toContainText('1 process', { timeout: 30_000 });
  await expect(page.getByTestId('sample-select').first()).toHaveValue('alloc_space');
});

test('a folder of two processes’ heap profiles is two processes, counting inuse_space', async ({ page }) => {
  const dir = path.join(ROOT, 'fixtures/go/leak-series');
  const names = readdirSync(dir).filter((n) => n.endsWith('.pb.gz'));
  await page.goto('/');
  await dropFiles(
    page,
    '[data-testid=dropzone]',
    names.map((n) => file('go/leak-series', n)),
  );
  await expect(page.getByTestId('job-info')).toContainText('2 processes', { timeout: 30_000 });
  await expect(page.getByTestId('sample-select').first()).toHaveValue('inuse_space');
});

test('a profile that declares more sample types offers each in the selector (issue 21 item 1)', async ({ page }) => {
  // fixtures/go/extra-types: a real Go profile with `samples/count` and `freed_space/bytes` added (its script)
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', [file('go/extra-types', 'extra.pb.gz')]);
  await expect(page.getByTestId('job-info')).toContainText('1 process', { timeout: 30_000 });
  const select = page.getByTestId('sample-select').first();
  // the slice bar mounts a few frames after the job shows (components/Deferred.svelte): wait for its options
  await expect(select.locator('option')).toHaveCount(6);
  const values = await select.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  expect(values).toEqual(['inuse_space', 'inuse_objects', 'alloc_space', 'alloc_objects', 'samples', 'freed_space']);
  await select.selectOption('freed_space');
  await expect(select).toHaveValue('freed_space');
  await expect(page.locator('body')).not.toContainText('do not declare');
});

// The Suspects view ranks live bytes whatever the Count control says (core/query/suspects.ts): with a count sample
// chosen its figures stay bytes, and it says so rather than show bytes under "alloc_objects".
test('with a count sample chosen, the Suspects view says it ranks live bytes', async ({ page }) => {
  await page.goto('/');
  await dropFiles(page, '[data-testid=dropzone]', [file('go/allocs', 'allocs.pb.gz')]);
  await expect(page.getByTestId('job-info')).toContainText('1 process', { timeout: 30_000 });
  const select = page.getByTestId('sample-select').first();
  await expect(select).toHaveValue('alloc_space');
  await select.selectOption('alloc_objects');
  const note = page.getByTestId('suspects-sample-note');
  await expect(note).toContainText(
    'Suspects rank live bytes (inuse_space) whatever Count says; alloc_objects applies to growth, flame graphs and diffs, in objects.',
  );
  await select.selectOption('inuse_space');
  await expect(note).toHaveCount(0);
});
