import { describe, expect, it } from 'vitest';
import { runCaptured } from './run-captured.js';
import { FIXTURES, jeprofReportTotal } from '../../tools/fixtures.js';

const cli = runCaptured;

const job = `${FIXTURES}/job`;
const OOM = new URL('../../fixtures/oom-job', import.meta.url).pathname;

describe('heaplens CLI', () => {
  it('summary --json: processes, snapshots with file/seq/trigger/live/truncated, warnings', async () => {
    const r = await cli('summary', job, '--json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.processes).toHaveLength(3);
    const exact = doc.processes.find((p: { prefix: string }) => p.prefix === 'exact');
    expect(exact.snapshots[0]).toMatchObject({ seq: 0, trigger: 'manual', liveObjects: 121, truncated: false });
    expect(typeof exact.pid).toBe('number');
    expect(doc.warnings).toEqual([]);
  });

  it('top: the largest stack of the final exact dump is the 1 MiB plateau; frames leaf first with hex addresses', async () => {
    const r = await cli('top', job, '--pid', '0', '--json');
    expect(r.code).toBe(1); // no process has pid 0
    const all = JSON.parse((await cli('top', job, '-n', '3', '--json')).out);
    const exact = all.stacks.filter((s: { process: string }) =>
      s.process.endsWith(all.processes[0].key.split('/').pop()),
    );
    expect(exact[0].liveBytes).toBe(16 * 65536);
    expect(exact[0].frames[0].address).toMatch(/^0x[0-9a-f]+$/);
    expect(exact[0].frames.every((f: { kind: string }) => f.kind !== 'allocator')).toBe(true);
    const withAlloc = JSON.parse((await cli('top', job, '-n', '1', '--json', '--show-allocator')).out);
    expect(withAlloc.stacks[0].frames.slice(0, 4).map((f: { kind: string }) => f.kind)).toEqual([
      'allocator',
      'allocator',
      'allocator',
      'allocator',
    ]);
  });

  it('diff two files: base/target/delta bytes, the leak first, total equal to jeprof --base', async () => {
    const summary = JSON.parse((await cli('summary', job, '--json')).out);
    const exact = summary.processes.find((p: { prefix: string }) => p.prefix === 'exact');
    const first = `${FIXTURES}/${exact.snapshots[0].file}`;
    const last = `${FIXTURES}/${exact.snapshots[exact.snapshots.length - 1].file}`;
    const r = JSON.parse((await cli('diff', first, last, '--json')).out);
    expect(r.stacks[0]).toMatchObject({ deltaBytes: 57 * 16384, baseBytes: 3 * 16384, targetBytes: 60 * 16384 });
    expect(r.processes[0].deltaBytes).toBe(jeprofReportTotal('references/jeprof-exact-base-m0-f.txt'));
    const bySeq = JSON.parse(
      (await cli('diff', job, '--pid', String(exact.pid), '--base', '0', '--target', '19', '--json')).out,
    );
    expect(bySeq.stacks[0].deltaBytes).toBe(19 * 3 * 16384);
  });

  it('diff of two files from different processes compares them as one series, with a warning', async () => {
    const summary = JSON.parse((await cli('summary', job, '--json')).out);
    const exact = summary.processes.find((p: { prefix: string }) => p.prefix === 'exact');
    const sampled = summary.processes.find((p: { prefix: string }) => p.prefix === 'sampled');
    const r = JSON.parse(
      (
        await cli(
          'diff',
          `${FIXTURES}/${exact.snapshots[0].file}`,
          `${FIXTURES}/${sampled.snapshots[0].file}`,
          '--json',
        )
      ).out,
    );
    expect(r.processes).toHaveLength(1);
    expect(r.processes[0].baseBytes).toBeCloseTo(exact.snapshots[0].liveBytes, 6);
    expect(r.processes[0].targetBytes).toBeCloseTo(sampled.snapshots[0].liveBytes, 6);
    expect(r.warnings.some((w: { message: string }) => /different processes/.test(w.message))).toBe(true);
  });

  it('growth --json: stacks ranked job-wide with pattern, σ and group; groups across processes', async () => {
    const r = JSON.parse((await cli('growth', job, '-n', '1', '--json')).out);
    expect(r.stacks).toHaveLength(3); // the top stack of each process
    for (let i = 1; i < r.stacks.length; i++) expect(r.stacks[i - 1].score).toBeGreaterThanOrEqual(r.stacks[i].score);
    for (const s of r.stacks) {
      expect(s.pattern).toBe('steady');
      expect(s.slopeBytesPerSnapshot).toBeGreaterThan(0);
      expect(s.deltaBytes).toBeGreaterThan(0);
      expect(typeof s.sigmaBytes).toBe('number');
    }
    expect(r.groups).toHaveLength(1); // -n applies to groups too
    expect(r.groups[0].group).toBe(0);
    expect(r.stacks[0].group).toBe(0); // the top stack job-wide is in the top group
    // leaky's leak in the exact and the sampled run: one group of two processes
    const exact = r.processes.find((p: { prefix: string }) => p.prefix === 'exact');
    const sampled = r.processes.find((p: { prefix: string }) => p.prefix === 'sampled');
    const leak = r.stacks.find((s: { pid: number }) => s.pid === exact.pid);
    expect(leak.groupProcesses).toBe(2);
    expect(leak.sigmaBytes).toBe(0); // exact run
    expect(leak.slopeBytesPerSnapshot).toBe(3 * 16384);
    const all = JSON.parse((await cli('growth', job, '-n', '5', '--json')).out);
    const g = all.groups.find((x: { group: number }) => x.group === leak.group);
    expect([...g.processes].sort()).toEqual([exact.pid, sampled.pid].sort());
    expect(g.pattern).toBe('steady');
    expect(g.frames.length).toBeGreaterThan(0);
    expect(exact).toMatchObject({ killed: false, lastCompleteSeq: 20, topPattern: 'steady' });
    expect(sampled).toMatchObject({ killed: true, lastCompleteSeq: 23 });
  });

  it('growth prints the job-wide ranking first, then each process', async () => {
    const r = await cli('growth', job, '-n', '2');
    expect(r.code).toBe(0);
    const jobAt = r.out.indexOf('job-wide suspects');
    expect(jobAt).toBe(0);
    expect(r.out.indexOf('(exact)')).toBeGreaterThan(jobAt);
    expect(r.out).toMatch(/steady/);
  });

  it('postmortem: who died, the last complete snapshot, the end rate, the time to a limit given as a memory.max file', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-pm-'));
    writeFileSync(join(dir, 'memory.max'), '17179869184\n');
    // a memory.max file bounds the job's sum: no process has a countdown of its own
    const asJob = JSON.parse((await cli('postmortem', job, '--limit', join(dir, 'memory.max'), '--json')).out);
    expect(asJob.limit).toMatchObject({ bytes: 16 * 1024 ** 3, scope: 'job' });
    expect(asJob.processes.every((p: { projection: unknown }) => p.projection === null)).toBe(true);
    // these dumps have no times (no capture context, mtimes of a copy): the job's sum has no rate, and it says why
    expect(asJob.job.projection).toBeNull();
    expect(asJob.job.note).toMatch(/a job-wide rate needs a rate per second from every process \(0 of 3 have one/);
    // each process's own limit: each its own time to it
    const r = JSON.parse(
      (await cli('postmortem', job, '--limit', join(dir, 'memory.max'), '--limit-scope', 'process', '--json')).out,
    );
    expect(r.limit).toMatchObject({ bytes: 16 * 1024 ** 3, scope: 'process' });
    expect(r.job.projection).toBeNull();
    const byPrefix = (x: string) => r.processes.find((p: { prefix: string }) => p.prefix === x);
    expect(r.died.sort()).toEqual([byPrefix('pygrow').pid, byPrefix('sampled').pid].sort());
    const s = byPrefix('sampled');
    expect(s.rate.perSnapshot).toBeGreaterThan(0);
    expect(s.projection.snapshots).toBeCloseTo((16 * 1024 ** 3 - s.lastKnownBytes) / s.rate.perSnapshot, 6);
    const text = await cli('postmortem', job, '--limit', '16G');
    // no log given: the two the dumps point at stopped without a final dump, and no log says why (never 'killed')
    expect(text.out).toMatch(/^[^,]+ \d+, [^,]+ \d+ stopped without a final dump and no log says why\./);
    expect(byPrefix('sampled').fate).toBe('stopped');
    expect(byPrefix('pygrow').fate).toBe('stopped');
    expect(byPrefix('exact').fate).toBe('exited');
    expect(text.out).toMatch(/top suspects job-wide/);
    expect((await cli('postmortem', job, '--limit', 'lots')).code).toBe(2);
  });

  it('postmortem --json on a real OOM kill: verdict, kill, fates, culprits and the logs read (fixtures/oom-job)', async () => {
    const { readFileSync } = await import('node:fs');
    const want = JSON.parse(readFileSync(`${OOM}/expected.json`, 'utf8'));
    const r = JSON.parse((await cli('postmortem', `${OOM}/dumps`, `${OOM}/logs`, `${OOM}/smaps`, '--json')).out);
    // the victim named by the role the job's log gives its pid (the workload's own role in expected.json)
    expect(r.verdict).toMatch(new RegExp(`^The kernel OOM-killed ${want.kill.role} \\(pid ${want.kill.pid},`));
    expect(r.processes.find((p: { pid: number }) => p.pid === want.kill.pid).name).toBe(want.kill.role);
    expect(r.kill).toMatchObject({ pid: want.kill.pid, by: 'kernel', limitBytes: want.cgroup.limitBytes });
    const fates = Object.fromEntries(r.processes.map((p: { pid: number; fate: string }) => [p.pid, p.fate]));
    expect(fates).toEqual(
      Object.fromEntries(want.processes.map((p: { pid: number; fate: string }) => [p.pid, p.fate])),
    );
    expect(r.culprits.map((c: { kind: string }) => c.kind).sort()).toEqual(['heap', 'outside-heap']);
    expect(r.logsRead.length).toBeGreaterThanOrEqual(4);
    const text = (await cli('postmortem', `${OOM}/dumps`, `${OOM}/logs`)).out;
    expect(text.split('\n')[0]).toMatch(/^The kernel OOM-killed/);
    expect(text).toMatch(/logs read:/);
  });

  it('bad input: one dump still gets a ranking (patterns unknown) with a note saying why', async () => {
    const one = `${job}/exact.${/exact\.(\d+)\./.exec((await import('node:fs')).readdirSync(job).find((n) => n.startsWith('exact.'))!)![1]}.5.m5.heap`;
    const r = JSON.parse((await cli('growth', one, '--json')).out);
    expect(r.stacks.length).toBeGreaterThan(0);
    for (const s of r.stacks) expect(s.pattern).toBe('unknown');
    expect(r.processes[0].notes.join(' ')).toMatch(/1 complete snapshot/);
    const text = await cli('growth', one);
    expect(text.out).toMatch(/note: 1 complete snapshot: patterns need 3, so they are unknown/);
  });

  it('human-readable tables by default', async () => {
    const r = await cli('top', job, '-n', '2');
    expect(r.code).toBe(0);
    // named by what ran: the maps' main executable, the fixture's program fixtures/jemalloc/bin/leaky
    expect(r.out).toMatch(/pid \d+ leaky \(exact\): 21 snapshots/);
    expect(r.out).toMatch(/1\.00 MiB/);
  });

  it('exit 2 on usage errors, 1 when nothing could be read, with the file named', async () => {
    expect((await cli('frobnicate', job)).code).toBe(2);
    expect((await cli('top')).code).toBe(2);
    expect((await cli('top', job, '-n', 'many')).code).toBe(2);
    expect((await cli('top', job, '--bogus')).code).toBe(2);
    const bad = await cli('summary', `${FIXTURES}/damaged/zero-length.heap`, `${FIXTURES}/damaged/not-a-dump.heap`);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/zero-length\.heap.*empty file/);
    expect(bad.err).toMatch(/not-a-dump\.heap:1: not a heap profile/);
    const missing = await cli('summary', '/nonexistent/folder');
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/\/nonexistent\/folder.*no such file/);
  });
});
