// The app's worker frame table and the CLI agree on the real Python fixture: the same python-first stacks (first
// surviving frame, interpreter frames folded to one marker), the same bytes kept by a focus chip and --focus.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadJob } from '../../../core/load/load-job.ts';
import { collectInputFiles } from '../../../node/io/node-files.ts';
import { runJson } from '../../../node/cli/run-captured.ts';
import { FrameCatalog } from '../../../core/frames/catalog.ts';
import { listDumps, parentLastDump, PY_FIXTURES } from '../../../fixtures/python/fixture-helpers.ts';
import type { ViewOptions } from '../lib/protocol.ts';

interface CliTop {
  stacks: { stackId: number; stackIds?: number[]; liveBytes: number; frames: { function?: string | null }[] }[];
}
const cliJson = (...argv: string[]) => runJson<CliTop>(...argv);

describe('worker FrameCatalog: python-first and chips on py312', () => {
  it('leads with the Python call site, folds the interpreter, and slices as the CLI does', async () => {
    const d = parentLastDump(listDumps('py312'));
    const job = await loadJob(await collectInputFiles([join(PY_FIXTURES, 'py312', d.name)]));
    const p = job.processes[0];
    const t = new FrameCatalog(p);
    const view: ViewOptions = { mode: 'python-first', hideAllocator: true };
    const s = p.snapshots[p.snapshots.length - 1];
    let leak = 0;
    for (const id of s.stackIds) {
      const keys = Array.from(t.stackKeys(id, view));
      const shown = keys.filter((k) => t.frames[k].kind !== 'folded');
      if (t.frames[shown[0]]?.function !== 'make_record') continue;
      leak++;
      expect(t.frames[keys[0]].kind).toBe('folded'); // the allocation plumbing in libpython, one marker
      expect(shown.slice(0, 3).map((k) => t.frames[k].function)).toEqual([
        'make_record',
        'leaky_handler',
        'Pipeline.step',
      ]);
      expect(shown.some((k) => /libpython/.test(t.frames[k].module ?? ''))).toBe(false);
    }
    expect(leak).toBeGreaterThan(0);
    // unfolded: the interpreter's frames are back, as many as the markers stood for
    const unfolded = t.stackKeys(s.stackIds[0], { ...view, unfold: true });
    expect(unfolded.length).toBeGreaterThanOrEqual(t.stackKeys(s.stackIds[0], view).length);
    // a focus chip keeps exactly the stacks --focus keeps
    for (const re of ['make_record', 'libc\\.so', '^recurse$']) {
      const chip: ViewOptions = { ...view, filters: [{ kind: 'focus', re }] };
      const kept = new Set(Array.from(s.stackIds).filter((id) => !t.dropped(id, chip)));
      const cli = await cliJson(
        'top',
        join(PY_FIXTURES, 'py312', d.name),
        '--json',
        '--no-symbols',
        '-n',
        '1000000',
        '--focus',
        re,
      );
      const cliIds = new Set(cli.stacks.flatMap((x) => x.stackIds ?? [x.stackId]));
      expect([...kept].sort(), re).toEqual([...cliIds].sort());
    }
  });
});
