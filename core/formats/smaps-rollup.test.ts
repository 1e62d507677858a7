// The fixture's smaps_rollup samples (make-oom-job.sh read /proc/<pid>/smaps_rollup every 0.5 s); expected.json
// holds the last sample before the kill per process, parsed independently by workload/expected.py.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSmapsRollup } from './smaps-rollup.js';

const dir = new URL('../../fixtures/oom-job/', import.meta.url);
const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8')) as {
  processes: {
    pid: number;
    lastSmapsRollup: { realtimeMs: number; Rss: number; Private_Dirty: number; Shared_Dirty: number };
  }[];
};

describe('smaps_rollup samples', () => {
  it('reads every sample with its pid and time; the figures match the independent reading', () => {
    for (const name of readdirSync(new URL('smaps/', dir))) {
      const r = parseSmapsRollup(readFileSync(new URL(`smaps/${name}`, dir), 'utf8'))!;
      expect(r.warnings).toEqual([]);
      const want = expected.processes.find((p) => name === `${p.pid}.txt`)!;
      const s = r.samples.find((x) => x.atMs === want.lastSmapsRollup.realtimeMs)!;
      expect(s.pid).toBe(want.pid);
      expect(s.rss).toBe(want.lastSmapsRollup.Rss);
      expect(s.privateDirty).toBe(want.lastSmapsRollup.Private_Dirty);
      expect(s.sharedDirty).toBe(want.lastSmapsRollup.Shared_Dirty);
    }
  });

  it('a bare copy takes its pid from the caller; a cut sample is named', () => {
    const one = '55d0-7ffc ---p 00000000 00:00 0   [rollup]\nRss:   100 kB\nPrivate_Dirty:  40 kB\n';
    expect(parseSmapsRollup(one, 7)!.samples[0]).toMatchObject({
      pid: 7,
      rss: 102400,
      privateDirty: 40960,
      atMs: null,
    });
    const cut = parseSmapsRollup(
      one + '# pid=8 realtime_ms=5\n55d0-7ffc ---p 00000000 00:00 0   [rollup]\nPss: 3 kB\n',
    )!;
    expect(cut.samples).toHaveLength(1);
    expect(cut.warnings[0].message).toMatch(/without its Rss/);
    expect(parseSmapsRollup('Rss: 1 kB\n')).toBeNull();
  });
});
