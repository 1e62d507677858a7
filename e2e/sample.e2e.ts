// The bundled sample ("try it", issue 48): fixtures/oom-job, a real job the kernel's OOM killer stopped. Its first
// screen — the verdict and the first suspect — names the leak by its Python function and line and
// the process that was killed, with no hex address. The names come from the workload (its `# @steplog-alloc` line)
// and from expected.json (the workload's own record of the kill), not from heaplens.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { guardNetwork, ROOT, SHOTS } from './helpers.ts';

const OOM = path.join(ROOT, 'fixtures', 'oom-job');
const want = JSON.parse(readFileSync(path.join(OOM, 'expected.json'), 'utf8')) as {
  leak: { function: string; file: string };
  kill: { pid: number; role: string };
};
const LEAK_LINE =
  readFileSync(path.join(OOM, 'workload', want.leak.file), 'utf8')
    .split('\n')
    .findIndex((l) => l.includes('# @steplog-alloc')) + 1;
const LEAK = `${want.leak.function} (${want.leak.file}:${LEAK_LINE})`;
/** the same as the suspect row lays it out (the function and its place in spans of their own) */
const LEAK_RE = new RegExp(
  `${want.leak.function.replace('.', '\\.')}\\s*\\(${want.leak.file.replace('.', '\\.')}:${LEAK_LINE}\\)`,
);

test('"try it" opens on the leak by name and the killed process, at 1280×800', async ({ context, page }) => {
  expect(LEAK_LINE).toBeGreaterThan(0);
  await guardNetwork(context);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto('/');
  await page.getByTestId('try-sample').click();
  await expect(page.getByTestId('job-info')).toContainText('4 processes', { timeout: 60_000 });

  // the verdict: who was killed (the kernel's log is in the sample) and what filled the memory; the first suspect:
  // the leak, by its line
  const verdict = page.getByTestId('verdict-sentence');
  // named by its role in the job's log (fixtures/oom-job/logs: "started loader-1 pid=…"), as expected.json records it
  await expect(verdict).toContainText(`OOM-killed ${want.kill.role} (pid ${want.kill.pid}`, { timeout: 30_000 });
  await expect(verdict).toContainText(`The growth that filled it: ${LEAK}`);
  const first = page.getByTestId('suspect-row').first();
  await expect(first).toContainText(LEAK_RE);
  await expect(first).toContainText('steady');
  // the leaf of the first suspect's stack and the verdict carry no hex address
  expect(await verdict.innerText()).not.toMatch(/0x[0-9a-f]+/);
  expect((await first.innerText()).split('←')[0]).not.toMatch(/0x[0-9a-f]+/);
  // a whole sample: no dump read as cut
  await expect(page.getByTestId('warnings')).toContainText('No warnings');
  // all of it on the first screen, without scrolling
  for (const el of [verdict, first]) {
    const box = (await el.boundingBox())!;
    expect(box.y + box.height, await el.innerText()).toBeLessThanOrEqual(800);
  }
  await page.screenshot({ path: path.join(SHOTS, 'sample-first-screen.png') });
});
