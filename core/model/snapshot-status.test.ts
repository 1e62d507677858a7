import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadJob } from '../load/load-job.js';
import { lastCompleteIndex, snapshotTotalBytes } from './snapshot-status.js';
import { fixtureFile, fixturePath, jeprofTotals, jobProcess } from '../../tools/fixtures.js';
import type { InputFile } from '../formats/input-file.js';

function renamed(f: InputFile, path: string): InputFile {
  return { ...f, path };
}

describe('cut dumps', () => {
  it('a dump cut in its stacks is incomplete; its total comes from the intact header (jeprof total of the whole file)', async () => {
    const source = readFileSync(fixturePath('damaged/SOURCE'), 'utf8').trim();
    const whole = jeprofTotals().get(`job/${source}`)!.inuseSpace;
    const job = await loadJob([fixtureFile('damaged/truncated-in-stacks.heap')]);
    const s = job.processes[0].snapshots[0];
    expect(s.complete).toBe(false);
    expect(s.live.bytes).toBeLessThan(whole); // only part of the records
    expect(s.headerLiveBytes).toBe(whole); // period 1: the header is exact
    expect(snapshotTotalBytes(s)).toBe(whole);
  });

  it('a dump cut inside its maps section still has every record: complete', async () => {
    const job = await loadJob([fixtureFile('damaged/truncated-in-maps.heap')]);
    const s = job.processes[0].snapshots[0];
    expect(s.truncated).not.toBeNull();
    expect(s.complete).toBe(true);
  });

  it('the last complete snapshot is the default target when the last dump was cut', async () => {
    // the exact run's m19 and its cut copy as the process's last dump (seq 21, after the final dump 20)
    const exact = jobProcess('exact'); // "exact.<pid>", the pid from the file names
    const files = [
      fixtureFile(`job/${exact}.18.m18.heap`),
      fixtureFile(`job/${exact}.19.m19.heap`),
      renamed(fixtureFile('damaged/truncated-in-stacks.heap'), `job/${exact}.21.i0.heap`),
    ];
    const job = await loadJob(files);
    const p = job.processes[0];
    expect(p.snapshots.map((s) => s.complete)).toEqual([true, true, false]);
    expect(lastCompleteIndex(p)).toBe(1);
  });
});
