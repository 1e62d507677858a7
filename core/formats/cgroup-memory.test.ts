// The fixture's real cgroup v1 files (copied by make-oom-job.sh after the kill) against expected.json, which
// read them independently (workload/expected.py); v2 files as cgroup-v2.rst documents them.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { combineCgroupFiles, parseCgroupFile } from './cgroup-memory.js';

const dir = new URL('../../fixtures/oom-job/logs/cgroup/', import.meta.url);
const expected = JSON.parse(readFileSync(new URL('../../expected.json', dir), 'utf8')) as {
  cgroup: { limitBytes: number; maxUsageBytes: number; failcnt: number; oomKills: number };
};

describe('cgroup memory files', () => {
  it('v1 files of the real run: limit, peak, failcnt, oom_kill', () => {
    const files = readdirSync(dir).map((n) => ({
      file: n,
      cg: parseCgroupFile(n, readFileSync(new URL(n, dir), 'utf8')),
    }));
    expect(files.every((f) => f.cg !== null)).toBe(true);
    const c = combineCgroupFiles(files.map((f) => ({ file: f.file, cg: f.cg! })));
    expect(c.version).toBe(1);
    expect(c.limitBytes).toBe(expected.cgroup.limitBytes);
    expect(c.peakBytes).toBe(expected.cgroup.maxUsageBytes);
    expect(c.failcnt).toBe(expected.cgroup.failcnt);
    expect(c.oomKills).toBe(expected.cgroup.oomKills);
    expect(c.stat!.pgfault).toBeGreaterThan(0);
  });

  it('keyed files by content whatever their name; one-number files by name', () => {
    const ev = parseCgroupFile('events.txt', 'low 0\nhigh 12\nmax 340\noom 3\noom_kill 2\noom_group_kill 0\n')!;
    expect(ev).toMatchObject({
      kind: 'memory.events',
      version: 2,
      values: { oom_kill: 2, oom: 3, max: 340, high: 12 },
    });
    const c = combineCgroupFiles([
      { file: 'e', cg: ev },
      { file: 'memory.max', cg: parseCgroupFile('x/memory.max', '8589934592\n')! },
      { file: 'memory.peak', cg: parseCgroupFile('memory.peak', '8589930496\n')! },
    ]);
    expect(c).toMatchObject({ version: 2, oomKills: 2, limitBytes: 8589934592, peakBytes: 8589930496 });
    expect(parseCgroupFile('memory.max', 'max\n')!.values.value).toBeNull();
    expect(parseCgroupFile('memory.limit_in_bytes', '9223372036854771712\n')!.values.value).toBeNull();
    expect(parseCgroupFile('notes.txt', '42\n')).toBeNull();
    expect(parseCgroupFile('memory.max', 'lots\n')).toBeNull();
  });

  it('a cut file: the odd line named, the rest kept', () => {
    const cg = parseCgroupFile('oom', 'oom_kill_disable 0\nunder_oom 0\noom_ki')!;
    expect(cg.kind).toBe('memory.oom_control');
    expect(cg.warnings).toEqual([{ line: 3, message: expect.stringMatching(/not a "key value" line/) }]);
    expect(combineCgroupFiles([{ file: 'oom', cg }]).oomKills).toBeNull();
  });
});
