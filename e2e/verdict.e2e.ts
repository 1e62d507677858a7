// Why the job died, in the app: the first screen leads with the verdict sentence for the real OOM kill of
// fixtures/oom-job (dumps + the kernel log, cgroup files, job log and smaps_rollup samples it copied), and
// lists the logs read. The victim's pid comes from the fixture's expected.json (the workload's waitpid).
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { dropFiles, folderFiles, guardNetwork, ROOT } from './helpers.ts';

const OOM = path.join(ROOT, 'fixtures', 'oom-job');

test('the verdict first: the kernel OOM-killed the loader, the logs read listed', async ({ context, page }) => {
  await guardNetwork(context);
  const want = JSON.parse(readFileSync(path.join(OOM, 'expected.json'), 'utf8')) as { kill: { pid: number } };
  await page.goto('/');
  const files = ['dumps', 'logs/cgroup', 'smaps'].flatMap((d) => folderFiles(path.join(OOM, d)));
  for (const name of ['dmesg.txt', 'dmesg-T.txt', 'job.log']) {
    const abs = path.join(OOM, 'logs', name);
    files.push({ name, b64: readFileSync(abs).toString('base64'), mtimeMs: statSync(abs).mtimeMs });
  }
  await dropFiles(page, '[data-testid=dropzone]', files);
  const v = page.getByTestId('verdict');
  await expect(v).toContainText(`The kernel OOM-killed python3.12 oom_job.py (pid ${want.kill.pid},`, {
    timeout: 60_000,
  });
  await expect(v).toContainText('copy-on-write');
  await v.getByText(/logs? read/).click();
  await expect(v).toContainText('dmesg.txt');
});
