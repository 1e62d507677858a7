// collect's readers of the node on made-up tools and files: --since, the kernel log's choice of source and its cut at
// the job's start, the job's cgroup. The live run (a real OOM kill) is native-tools/capture/collect-live.test.ts.
import { describe, expect, it } from 'vitest';
import { jobCgroupDirs, parseSince, readKernelLog } from './collect-files.js';

const NOW = Date.UTC(2026, 11, 7, 12, 0, 0);

describe('--since', () => {
  it('reads ISO times, epoch seconds and durations ago', () => {
    expect(parseSince('2026-12-07T04:00:00Z', NOW)).toEqual({ ok: true, ms: Date.UTC(2026, 11, 7, 4) });
    expect(parseSince('@1796616794', NOW)).toEqual({ ok: true, ms: 1796616794000 });
    expect(parseSince('90m', NOW)).toEqual({ ok: true, ms: NOW - 90 * 60_000 });
    expect(parseSince('2h', NOW)).toEqual({ ok: true, ms: NOW - 7_200_000 });
    // no zone: the machine's local time, as `date` prints it (Date's own reading of a local time)
    expect(parseSince('2026-12-07 04:00', NOW)).toEqual({ ok: true, ms: new Date(2026, 11, 7, 4, 0).getTime() });
    expect(parseSince('yesterday', NOW).ok).toBe(false);
  });
});

describe('the kernel log', () => {
  // booted 1000 s before NOW; the job started 400 s after boot
  const uptime = () => 1000;
  const since = NOW - 600_000;
  const dmesg = [
    '[   10.000000] boot line',
    '[  399.500000] before the job',
    '[  400.100000] oom-kill: one',
    '  continued',
    '[  900.000000] Killed process 7 (python)',
  ].join('\n');
  const tools =
    (d: { status: number; stdout: string; stderr?: string }, j: { status: number; stdout: string; stderr?: string }) =>
    (cmd: string) => ({ stderr: '', ...(cmd === 'dmesg' ? d : j) });

  it('dmesg from the job start on (seconds since boot), lines without a time kept with theirs', () => {
    const k = readKernelLog(since, tools({ status: 0, stdout: dmesg }, { status: 1, stdout: '' }), uptime, NOW);
    expect(k.source).toBe('dmesg');
    expect(k.text).toBe('[  400.100000] oom-kill: one\n  continued\n[  900.000000] Killed process 7 (python)\n');
    expect(k.problems).toEqual([]);
  });

  it('the journal when dmesg is refused or its ring buffer no longer reaches back; what failed is said', () => {
    const journal = '2026-12-07T11:55:00+0000 node1 kernel: Killed process 7 (python)\n';
    const refused = readKernelLog(
      since,
      tools(
        { status: 1, stdout: '', stderr: 'dmesg: read kernel buffer failed: Operation not permitted' },
        { status: 0, stdout: journal },
      ),
      uptime,
      NOW,
    );
    expect(refused).toMatchObject({ source: 'journalctl -k', text: journal, lines: 1 });
    expect(refused.problems).toEqual(['dmesg: read kernel buffer failed: Operation not permitted']);

    const rotated = readKernelLog(
      since,
      tools({ status: 0, stdout: '[  500.000000] later\n' }, { status: 0, stdout: '-- No entries --\n' }),
      uptime,
      NOW,
    );
    expect(rotated.source).toBe('dmesg (partial)');
    expect(rotated.problems).toEqual([
      'dmesg: its ring buffer starts 100 s after --since (older lines overwritten)',
      'journalctl -k: no kernel messages in the journal since then',
    ]);
  });
});

describe("the job's cgroup", () => {
  it('the recorded ones, else our own unless it is the root', () => {
    expect(jobCgroupDirs(new Set(['/sys/fs/cgroup/job']), '0::/other\n')).toEqual(['/sys/fs/cgroup/job']);
    expect(jobCgroupDirs(new Set(), '4:memory:/slurm/job_9\n0::/\n')).toEqual(['/sys/fs/cgroup/memory/slurm/job_9']);
    expect(jobCgroupDirs(new Set(), '0::/user.slice/job.scope\n')).toEqual(['/sys/fs/cgroup/user.slice/job.scope']);
    expect(jobCgroupDirs(new Set(), '4:memory:/\n0::/\n')).toEqual([]);
  });
});
