// What `heaplens capture` hands the job (capture-plan.ts) and what it reads of the machine (capture-files.ts), on
// made-up environments and cgroup files; the live run is capture-live.test.ts.
import { describe, expect, it } from 'vitest';
import { captureEnv, DEFAULTS, lgInterval, parseSizeOption, planText } from './capture-plan.js';
import { cgroupMemoryLimit, cgroupPaths } from './capture-files.js';

const base = { settings: DEFAULTS, dir: '/d', jemalloc: '/je.so', library: '/cap.so', cgroupLimit: null };

describe('capture environment', () => {
  it('sets jemalloc, the library, profiling and Python through malloc', () => {
    const env = captureEnv({ ...base, env: { PATH: '/bin' } });
    expect(env.LD_PRELOAD).toBe('/je.so:/cap.so');
    // 2^30 bytes = 1 GiB between interval dumps (jemalloc: lg_prof_interval is log2 of the bytes)
    expect(env.MALLOC_CONF).toBe('prof:true,prof_prefix:/d/heap,lg_prof_interval:30,prof_final:true');
    expect(env.PYTHONMALLOC).toBe('malloc');
    expect(env.HEAPLENS_DUMP_RSS_STEP).toBe(String(64 * 1024 * 1024));
    expect(env.HEAPLENS_DUMP_KEEP).toBe('64');
    // no limit: the fractions would only make the library complain once per process
    expect(env.HEAPLENS_DUMP_CGROUP_FRACTIONS).toBeUndefined();
    expect(env.PATH).toBe('/bin');
  });

  it("keeps the user's own settings after ours (jemalloc: the last pair of a key wins) and their own HEAPLENS_*", () => {
    const env = captureEnv({
      ...base,
      cgroupLimit: 8 * 2 ** 30,
      env: { MALLOC_CONF: 'lg_prof_sample:17', LD_PRELOAD: '/a.so /b.so', HEAPLENS_DUMP_KEEP: '0' },
    });
    expect(env.MALLOC_CONF).toMatch(/,lg_prof_sample:17$/);
    expect(env.LD_PRELOAD).toBe('/je.so:/cap.so:/a.so:/b.so');
    expect(env.HEAPLENS_DUMP_KEEP).toBe('0');
    expect(env.HEAPLENS_DUMP_CGROUP_FRACTIONS).toBe('0.8,0.9,0.95');
  });

  it('turns interval and RSS dumps off', () => {
    const env = captureEnv({ ...base, settings: { ...DEFAULTS, every: null, rssStep: null }, env: {} });
    expect(env.MALLOC_CONF).toContain('lg_prof_interval:-1');
    expect(env.HEAPLENS_DUMP_RSS_STEP).toBeUndefined();
  });

  it('sizes: binary units (the kernel memparse), off, the nearest power of two for jemalloc', () => {
    expect(parseSizeOption('64M')).toEqual({ ok: true, bytes: 64 * 1024 * 1024 });
    expect(parseSizeOption('1.5G')).toEqual({ ok: true, bytes: 1.5 * 2 ** 30 });
    expect(parseSizeOption('off')).toEqual({ ok: true, bytes: null });
    expect(parseSizeOption('lots').ok).toBe(false);
    expect(lgInterval(2 ** 28)).toBe(28);
    expect(lgInterval(300 * 2 ** 20)).toBe(28); // 300 MiB: 256 MiB is nearer than 512 MiB
    expect(lgInterval(1)).toBe(20);
  });

  it('says what it will dump', () => {
    expect(planText(DEFAULTS, 2 ** 33)).toBe(
      "a dump every 64 MiB of RSS growth (at most one a second), every 1 GiB allocated, at 80%, 90%, 95% of the cgroup's 8 GiB, at exit; each process keeps its first dump and its newest 64",
    );
  });
});

describe('cgroup memory limit', () => {
  const files =
    (m: Record<string, string>) =>
    (p: string): string | null =>
      m[p] ?? null;

  it('v1: the smallest limit of the cgroup and those above it; the unlimited value is none', () => {
    const self = '4:memory:/slurm/job_7\n0::/\n';
    expect(cgroupPaths(self)).toEqual({ v2: '/', v1memory: '/slurm/job_7' });
    const read = files({
      '/proc/self/cgroup': self,
      '/sys/fs/cgroup/memory/slurm/job_7/memory.limit_in_bytes': '9223372036854771712\n',
      '/sys/fs/cgroup/memory/slurm/memory.limit_in_bytes': '4294967296\n',
      '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
    });
    expect(cgroupMemoryLimit(read)).toBe(4294967296);
  });

  it('v2: memory.max, "max" is none', () => {
    const read = files({
      '/proc/self/cgroup': '0::/user.slice/job.scope\n',
      '/sys/fs/cgroup/user.slice/job.scope/memory.max': '2147483648\n',
      '/sys/fs/cgroup/user.slice/memory.max': 'max\n',
    });
    expect(cgroupMemoryLimit(read)).toBe(2147483648);
    expect(cgroupMemoryLimit(files({ '/proc/self/cgroup': '0::/\n' }))).toBeNull();
  });
});
