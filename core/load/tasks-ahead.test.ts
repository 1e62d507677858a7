// How many dump tasks loadJob starts ahead of its merge: TASKS_AHEAD_PER_READER a reader, and past two a reader
// only while the files started and not merged are under AHEAD_BYTES. The tasks are held (not answered) until
// counted, then answered (by the real reader for the small dumps, and the job must come out whole).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AHEAD_BYTES, loadJob, TASKS_AHEAD_PER_READER, type DumpRunner } from './load-job.js';
import { runDumpTask } from './dump-task.js';
import { collectInputFiles } from '../../node/io/node-files.js';

const work = mkdtempSync(join(tmpdir(), 'heaplens-ahead-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// one process's dumps: a jemalloc heap profile of one stack, with `pad` bytes of comment-free MAPPED_LIBRARIES
// lines after it (a dump of that size; the reader reads the maps section as maps)
function writeJob(dir: string, dumps: number, bytesEach: number): void {
  const head = [
    'heap_v2/524288',
    '  t*: 1: 4096 [0: 0]',
    '  t0: 1: 4096 [0: 0]',
    '@ 0x401000 0x401100',
    '  t*: 1: 4096 [0: 0]',
    '  t0: 1: 4096 [0: 0]',
    '',
    'MAPPED_LIBRARIES:',
    '00400000-00500000 r-xp 00000000 08:01 1 /usr/bin/app',
    '',
  ].join('\n');
  const line = '7f0000000000-7f0000001000 r--p 00000000 00:00 0 \n';
  const body = head + line.repeat(Math.max(0, Math.ceil((bytesEach - head.length) / line.length)));
  for (let s = 0; s < dumps; s++) writeFileSync(join(dir, `app.4242.${s}.i${s}.heap`), body);
}

/**
 * Loads `dir` with `readers` readers; returns how many tasks were started before the first was answered, and the
 * dumps of the job. `read`: the tasks are answered by the reader (else as files that gave nothing, to keep the
 * large cases short).
 */
async function startedBeforeFirstAnswer(
  dir: string,
  readers: number,
  read = true,
): Promise<{ started: number; dumps: number }> {
  const files = await collectInputFiles([dir]);
  let started = 0;
  let open: () => void = () => undefined;
  const gate = new Promise<void>((r) => (open = r));
  const runDump: DumpRunner = async (task) => {
    started++;
    await gate;
    return read ? runDumpTask(task) : { file: task.file.path, warnings: [], parsed: null };
  };
  const loading = loadJob(files, { runDump, readers });
  // every task that loadJob starts before any answer is started within a few turns of the event loop
  for (let k = 0; k < 50; k++) await new Promise((r) => setTimeout(r, 1));
  const before = started;
  open();
  const job = await loading;
  return { started: before, dumps: job.processes.reduce((n, p) => n + p.snapshots.length, 0) };
}

describe('dump tasks started ahead of the merge', () => {
  it(`small dumps: ${TASKS_AHEAD_PER_READER} a reader`, async () => {
    const dir = mkdtempSync(join(work, 'small-'));
    writeJob(dir, 3 * TASKS_AHEAD_PER_READER, 2048);
    expect(await startedBeforeFirstAnswer(dir, 2)).toEqual({
      started: 2 * TASKS_AHEAD_PER_READER,
      dumps: 3 * TASKS_AHEAD_PER_READER,
    });
    expect(await startedBeforeFirstAnswer(dir, 1)).toEqual({
      started: TASKS_AHEAD_PER_READER,
      dumps: 3 * TASKS_AHEAD_PER_READER,
    });
  });

  it('large dumps: past two a reader, only while the files started are under AHEAD_BYTES', async () => {
    const mib = 1024 * 1024;
    const dir = mkdtempSync(join(work, 'large-'));
    writeJob(dir, 20, 3 * mib);
    // tasks 0-3 whatever their size, then one more while 3 MiB × started < 32 MiB: 11 in all
    const want = Math.ceil(AHEAD_BYTES / (3 * mib));
    expect(want).toBe(11);
    expect(await startedBeforeFirstAnswer(dir, 2, false)).toEqual({ started: want, dumps: 0 });
    const huge = mkdtempSync(join(work, 'huge-'));
    writeJob(huge, 8, AHEAD_BYTES / 2);
    // two a reader even when they are over the bound together
    expect(await startedBeforeFirstAnswer(huge, 2, false)).toEqual({ started: 4, dumps: 0 });
  });
});
