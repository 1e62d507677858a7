// The kernel's own report: fixtures/oom-job/logs/ holds what `dmesg` and `dmesg -T` printed when the real OOM
// killer ended that job (make-oom-job.sh); expected figures come from its expected.json (the job's counters,
// the cgroup's own files) and from the kernel's numbers as printed, read by eye here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { looksLikeKernelOomLog, parseKernelOomLog } from './kernel-oom.js';

const dir = new URL('../../fixtures/oom-job/', import.meta.url);
const dmesg = readFileSync(new URL('logs/dmesg.txt', dir), 'utf8');
const dmesgT = readFileSync(new URL('logs/dmesg-T.txt', dir), 'utf8');
const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8')) as {
  kill: { pid: number; signal: number };
  cgroup: { limitBytes: number };
  processes: { pid: number; role: string }[];
};

describe('kernel OOM report', () => {
  it('reads the real dmesg report: the victim, its sizes, the cgroup at its limit, the task table', () => {
    const log = parseKernelOomLog(dmesg)!;
    expect(log.form).toBe('dmesg');
    expect(log.kills).toHaveLength(1);
    const k = log.kills[0];
    expect(k.pid).toBe(expected.kill.pid);
    expect(k.scope).toBe('memcg');
    expect(k.comm).toBe('python3.12');
    expect(k.oomScoreAdj).toBe(1000);
    expect(k.memcg!.limitBytes).toBe(expected.cgroup.limitBytes);
    expect(k.memcg!.usageBytes).toBe(expected.cgroup.limitBytes); // killed at the limit
    const trainer = expected.processes.find((p) => p.role === 'trainer')!;
    expect(k.invokedBy!.pid).toBe(trainer.pid); // the trainer's allocation faulted, a loader died
    expect(k.invokedBy!.oomScoreAdj).toBe(0);
    expect(k.constraint).toBe('CONSTRAINT_MEMCG');
    expect(k.oomMemcg).toMatch(/^\/heaplens-oom-job-\d+$/);
    expect(new Set(k.tasks.map((t) => t.pid))).toEqual(new Set(expected.processes.map((p) => p.pid)));
    expect(k.tasks.find((t) => t.pid === k.pid)!.oomScoreAdj).toBe(1000);
    expect(k.stats.rss).toBeGreaterThan(0.9 * expected.cgroup.limitBytes);
    // anon-rss is in kB in the line: compare with the line's own text
    const anon = Number(/anon-rss:(\d+)kB/.exec(k.text)![1]);
    expect(k.anonRssBytes).toBe(anon * 1024);
    expect(k.bootS).toBeGreaterThan(0);
    expect(log.warnings).toEqual([]);
  });

  it('reads dmesg -T as the wall clock, to the same kill', () => {
    const a = parseKernelOomLog(dmesg)!.kills[0];
    const b = parseKernelOomLog(dmesgT)!.kills[0];
    expect(parseKernelOomLog(dmesgT)!.form).toBe('dmesg-T');
    expect(b.pid).toBe(a.pid);
    expect(b.wallMs).not.toBeNull();
    expect(b.bootS).toBeNull();
    // the trainer saw the kill (waitpid) within a second or two of the kernel's line
    const seen =
      (
        JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8')) as {
          kill: { seenByTrainerAt: { realtime: number } };
        }
      ).kill.seenByTrainerAt.realtime * 1000;
    expect(Math.abs(seen - b.wallMs!)).toBeLessThan(3000);
  });

  it('reads the journal and kern.log forms of the same lines', () => {
    // journalctl -k (short-precise) and rsyslog's kern.log prefixes (systemd's journalctl(1) output modes;
    // rsyslog's RSYSLOG_TraditionalFileFormat), put before the real lines
    const body = dmesg.split('\n').filter((l) => l.length > 0);
    const journal = body
      .map((l) => l.replace(/^\[\s*[\d.]+\] /, 'Dec 01 20:37:29.876595 trainer-host kernel: '))
      .join('\n');
    const kern = body.map((l) => 'Dec  1 20:37:29 trainer-host kernel: ' + l).join('\n');
    const iso = body
      .map((l) => l.replace(/^\[\s*[\d.]+\] /, '2026-12-01T21:37:29.876595+01:00 trainer-host kernel: '))
      .join('\n');
    const j = parseKernelOomLog(journal, 2026)!;
    expect(j.form).toBe('journal');
    expect(j.kills[0].pid).toBe(expected.kill.pid);
    expect(j.kills[0].wallMs).toBe(Date.UTC(2026, 11, 1, 20, 37, 29) + 876.595);
    const s = parseKernelOomLog(kern, 2026)!;
    expect(s.form).toBe('syslog');
    expect(s.kills[0].bootS).toBeGreaterThan(0);
    expect(s.kills[0].wallMs).toBe(Date.UTC(2026, 11, 1, 20, 37, 29));
    const z = parseKernelOomLog(iso)!;
    expect(z.kills[0].wallMs).toBe(Date.UTC(2026, 11, 1, 20, 37, 29) + 876.595);
  });

  it('is detected by content, not by name', () => {
    expect(looksLikeKernelOomLog(dmesg)).toBe(true);
    expect(looksLikeKernelOomLog('[ 1.0] usb 1-1: new device\n')).toBe(false);
    expect(parseKernelOomLog('hello')).toBeNull();
  });

  it('a global OOM kill from an older kernel (4.4: no UID, pgtables or oom_score_adj fields)', () => {
    // the form in kernels before 4.14 (mm/oom_kill.c then printed only the three rss fields)
    const old =
      '[84123.043569] R invoked oom-killer: gfp_mask=0x24280ca, order=0, oom_score_adj=0\n' +
      '[84123.043577] CPU: 1 PID: 3026 Comm: R Not tainted 4.4.0-1013-aws #22-Ubuntu\n' +
      '[84123.060012] Out of memory: Kill process 3026 (R) score 772 or sacrifice child\n' +
      '[84123.060100] Killed process 3026 (R) total-vm:15550136kB, anon-rss:12238816kB, file-rss:0kB\n';
    // "Killed process" alone (pre-4.19 wording) is not our pattern: the log is one without a kill we read
    const log = parseKernelOomLog(old);
    expect(log).not.toBeNull();
    const g = parseKernelOomLog(old.replace('] Killed process', '] Out of memory: Killed process'))!;
    expect(g.kills[0].scope).toBe('global');
    expect(g.kills[0].pid).toBe(3026);
    expect(g.kills[0].invokedBy!.pid).toBe(3026);
    expect(g.kills[0].anonRssBytes).toBe(12238816 * 1024);
    expect(g.warnings.some((w) => /oom_score_adj/.test(w.message))).toBe(true);
  });

  it('two kills in one log are two kills, each with its own report', () => {
    const log = parseKernelOomLog(dmesg + dmesg.replaceAll(String(expected.kill.pid), '99999'))!;
    expect(log.kills.map((k) => k.pid)).toEqual([expected.kill.pid, 99999]);
    expect(log.kills[1].memcg).not.toBeNull();
  });

  it('a cut or hostile log: warnings with line numbers, never a wrong kill', () => {
    const lines = dmesg.split('\n');
    const killAt = lines.findIndex((l) => l.includes('Killed process'));
    // cut just before the kill line: a report without a kill
    const cut = parseKernelOomLog(lines.slice(0, killAt).join('\n'))!;
    expect(cut.kills).toEqual([]);
    expect(cut.warnings[0].message).toMatch(/ends inside an OOM report/);
    // the kill line cut mid-name
    const half = lines[killAt].slice(0, lines[killAt].indexOf('(') + 4);
    const h = parseKernelOomLog([...lines.slice(0, killAt), half].join('\n'))!;
    expect(h.kills[0].pid).toBe(expected.kill.pid);
    expect(h.kills[0].anonRssBytes).toBeNull();
    expect(h.warnings.some((w) => w.line === killAt + 1 && /cut before/.test(w.message))).toBe(true);
    // a huge line and a comm with ") total-vm:" in it
    const hostile =
      '[ 1.000000] ' +
      'x'.repeat(100000) +
      '\n' +
      '[ 2.000000] Memory cgroup out of memory: Killed process 77 (a) total-vm:1kB b) total-vm:8kB, anon-rss:4kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:0kB oom_score_adj:5\n' +
      '[ 3.000000] Memory cgroup out of memory: Killed process 99999999999999 (x) total-vm:1kB\n';
    const x = parseKernelOomLog(hostile)!;
    expect(x.warnings[0]).toMatchObject({ line: 1 });
    expect(x.kills).toHaveLength(1);
    expect(x.kills[0]).toMatchObject({ pid: 77, comm: 'a) total-vm:1kB b', anonRssBytes: 4096, oomScoreAdj: 5 });
  });

  it('an oom_score_adj or pid of hundreds of digits is no figure (the fuzzer found oomScoreAdj: Infinity)', () => {
    const lines = dmesg.split('\n');
    const at = lines.findIndex((l) => l.includes('invoked oom-killer'));
    const cpu = lines.findIndex((l, i) => i > at && /CPU: \d+ .*PID: \d+ Comm: /.test(l));
    lines[at] = lines[at].replace(/oom_score_adj=-?\d+/, `oom_score_adj=${'9'.repeat(400)}`);
    lines[cpu] = lines[cpu].replace(/PID: \d+/, `PID: ${'9'.repeat(400)}`);
    const r = parseKernelOomLog(lines.join('\n'))!;
    expect(r.kills[0].pid).toBe(expected.kill.pid);
    expect(r.kills[0].invokedBy?.oomScoreAdj).toBeNull();
    expect(r.kills[0].invokedBy?.pid).toBeNull();
    // 1001 is past the kernel's bound as well
    lines[at] = lines[at].replace(/oom_score_adj=\d+/, 'oom_score_adj=1001');
    expect(parseKernelOomLog(lines.join('\n'))!.kills[0].invokedBy?.oomScoreAdj).toBeNull();
  });

  it("the real report behind a prefix of no known form: a node's name, a log shipper's time; the kill line alone", () => {
    const lines = dmesg.split('\n');
    const killAt = lines.findIndex((l) => l.includes('Killed process')) + 1;
    // a node's name before dmesg's own line: every field still read, the same clock
    const node = parseKernelOomLog(lines.map((l) => (l ? `[node-b] ${l}` : l)).join('\n'))!;
    expect(node.kills).toHaveLength(1);
    expect(node.kills[0]).toMatchObject({ pid: expected.kill.pid, line: killAt, scope: 'memcg' });
    expect(node.kills[0].memcg!.limitBytes).toBe(expected.cgroup.limitBytes);
    expect(node.kills[0].tasks).toHaveLength(expected.processes.length);
    expect(node.kills[0].bootS).toBe(parseKernelOomLog(dmesg)!.kills[0].bootS);
    // a shipper's ISO time and host instead of dmesg's prefix: the time from the prefix
    const shipped = lines.map((l) => l.replace(/^\[[^\]]*\] /, '2026-12-01T20:37:30.500Z node-b | ')).join('\n');
    const s = parseKernelOomLog(shipped)!;
    expect(s.form).toBe('prefixed');
    expect(s.kills[0]).toMatchObject({ pid: expected.kill.pid, wallMs: Date.UTC(2026, 11, 1, 20, 37, 30, 500) });
    expect(s.kills[0].memcg!.limitBytes).toBe(expected.cgroup.limitBytes);
    // only the kill line, behind anything: the kill is read (no usage or limit: said in a warning)
    const alone = `container-7 stderr F ${lines[killAt - 1].replace(/^\[[^\]]*\] /, '')}\n`;
    expect(looksLikeKernelOomLog(alone)).toBe(true);
    const a = parseKernelOomLog(alone)!;
    expect(a.kills.map((k) => [k.pid, k.comm])).toEqual([[expected.kill.pid, 'python3.12']]);
    expect(a.warnings.some((w) => /without the start of its report/.test(w.message))).toBe(true);
  });
});
