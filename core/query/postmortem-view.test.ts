// The post-mortem as the app's charts and the report draw it, on the real OOM kill of fixtures/oom-job. Every
// figure expected comes from the fixture's expected.json (the workload's counters, the cgroup's files, the
// smaps_rollup samples its script took), never from heaplens output.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeInputFile } from '../../node/io/node-files.js';
import type { InputFile } from '../formats/input-file.js';
import { loadJob } from '../load/load-job.js';
import type { Job } from '../model/model.js';
import { postmortemView, readPostmortemView, viewForProcesses } from './postmortem-view.js';

const OOM = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'oom-job');
const GiB = 1024 ** 3;

interface Expected {
  cgroup: { limitBytes: number; maxUsageBytes: number };
  kill: { pid: number; seenByTrainerAt: { realtime: number } };
  leak: { bytesPerSecond: number };
  trainer: { pid: number };
  processes: { role: string; pid: number; privateDirtyBytes: number; lastSmapsRollup: { Rss: number } }[];
}
const expected = JSON.parse(readFileSync(join(OOM, 'expected.json'), 'utf8')) as Expected;

function walk(dir: string): InputFile[] {
  const out: InputFile[] = [];
  for (const name of readdirSync(dir).sort()) {
    const abs = join(dir, name);
    const rel = relative(OOM, abs);
    if (rel.startsWith('workload') || /\.(sh|ts|md|json)$/.test(rel)) continue;
    const st = statSync(abs);
    if (st.isDirectory()) out.push(...walk(abs));
    else out.push(nodeInputFile(abs, `oom-job/${rel}`, st.size, st.mtimeMs));
  }
  return out;
}
let job: Job | null = null;
const oomJob = async (): Promise<Job> => (job ??= await loadJob(walk(OOM)));

describe('postmortem view on a real OOM kill', () => {
  it('marks the kill on the process the kernel named, at the kernel time, under the limit its line gave', async () => {
    const j = await oomJob();
    const v = postmortemView(j);
    expect(v.kill).not.toBeNull();
    const k = v.kill!;
    expect(k.by).toBe('kernel');
    expect(k.pid).toBe(expected.kill.pid);
    expect(j.processes[k.processIndex!].pid).toBe(expected.kill.pid);
    // the kernel killed it before the trainer's waitpid saw it, and not long before (the trainer polls)
    const seen = expected.kill.seenByTrainerAt.realtime * 1000;
    expect(k.atMs).not.toBeNull();
    expect(k.atMs!).toBeLessThanOrEqual(seen + 50);
    expect(k.atMs!).toBeGreaterThan(seen - 5000);
    expect(v.limit?.bytes).toBe(expected.cgroup.limitBytes);
    expect(k.evidence?.file).toMatch(/dmesg/);
    // the cgroup's limit bounds the job's sum: no process has a countdown of its own (the job was at it)
    expect(v.limit?.scope).toBe('job');
    const victim = v.processes.find((p) => p.pid === expected.kill.pid)!;
    expect(victim.fate).toBe('oom-killed');
    expect(victim.toLimit).toBeNull();
    for (const p of v.processes) expect(p.toLimit).toBeNull();
    expect(v.jobToLimit).toMatch(/^at the limit/);
  });

  it("measures the job's headroom from the cgroup's usage at the kill, not from the summed heap estimates", async () => {
    const v = postmortemView(await oomJob());
    // the kernel's line gave usage = limit (the cgroup's max_usage_in_bytes says the same): the job was at its limit;
    // the summed heap estimates (forked children's inherited allocations twice) would call it over
    expect(expected.cgroup.maxUsageBytes).toBe(expected.cgroup.limitBytes);
    expect(v.jobToLimit).toBe("at the limit (from the cgroup's usage at the kill)");
  });

  it("names the loaders' part outside the heap copy-on-write, at the RSS their smaps_rollup gave", async () => {
    const v = postmortemView(await oomJob());
    const victim = v.processes.find((p) => p.pid === expected.kill.pid)!;
    expect(victim.memory.explanation).toBe('copy-on-write');
    const rss = expected.processes.find((p) => p.pid === expected.kill.pid)!.lastSmapsRollup.Rss;
    expect(victim.memory.rssBytes).toBe(rss);
    // copied pages are private dirty pages its own allocations do not explain: some, never more than smaps says
    const dirty = expected.processes.find((p) => p.pid === expected.kill.pid)!.privateDirtyBytes;
    expect(victim.memory.parts.copyOnWrite!).toBeGreaterThan(16 * 1024 * 1024);
    expect(victim.memory.parts.copyOnWrite!).toBeLessThanOrEqual(dirty);
  });

  it("projects a typed limit at the trainer's end rate: the leak's own rate says when", async () => {
    const j = await oomJob();
    // typed as a limit of each process: each has its own time to it, the job none
    const v = postmortemView(j, { limit: { bytes: 2 * GiB, source: 'typed', scope: 'process' } });
    expect(v.limit).toEqual({ bytes: 2 * GiB, source: 'typed', scope: 'process' });
    expect(v.jobToLimit).toBeNull();
    const t = v.processes.find((p) => p.pid === expected.trainer.pid)!;
    const p = t.projection!;
    expect(p.seconds).not.toBeNull();
    // the workload grew its history at expected.leak.bytesPerSecond: the headroom at that rate
    const byCounters = p.headroomBytes / expected.leak.bytesPerSecond;
    expect(Math.abs(p.seconds! - byCounters) / byCounters).toBeLessThan(0.25);
    expect(p.secondsLo!).toBeLessThanOrEqual(p.seconds!);
    expect(p.secondsHi!).toBeGreaterThanOrEqual(p.seconds!);
    expect(t.toLimit).toContain('left:');
  });

  it("a typed limit of the job (the default): the job's sum against it at the summed end rates, no per-process countdown", async () => {
    const j = await oomJob();
    const v = postmortemView(j, { limit: { bytes: 2 * GiB, source: 'typed' } });
    expect(v.limit).toEqual({ bytes: 2 * GiB, source: 'typed', scope: 'job' });
    for (const p of v.processes) expect(p.toLimit).toBeNull();
    // measured from the cgroup's usage at the kill (the kernel's line): 2 GiB less that, at the leak's rate
    expect(v.jobToLimit).toMatch(/left: .*\(from the cgroup's usage at the kill\)$/);
  });

  it('reads back from a report as it was written, and refuses a damaged one naming the field', async () => {
    const v = postmortemView(await oomJob());
    const n = v.processes.length;
    const back = readPostmortemView(JSON.parse(JSON.stringify(v)), n)!;
    expect(back.verdict).toBe(v.verdict);
    expect(back.kill).toEqual(v.kill);
    expect(back.limit).toEqual(v.limit);
    expect(back.culprits).toEqual(v.culprits);
    expect(back.logsRead).toEqual(v.logsRead);
    expect(back.processes.map((p) => [p.pid, p.fate, p.toLimit, p.memory])).toEqual(
      v.processes.map((p) => [p.pid, p.fate, p.toLimit, p.memory]),
    );
    expect(readPostmortemView(undefined, n)).toBeNull();
    const bad = (edit: (o: Record<string, unknown>) => void): (() => unknown) => {
      const o = JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
      edit(o);
      return () => readPostmortemView(o, n);
    };
    expect(bad((o) => ((o.kill as Record<string, unknown>).by = 'martians'))).toThrow(/kill\.by/);
    expect(bad((o) => ((o.kill as Record<string, unknown>).processIndex = n))).toThrow(/kill\.processIndex/);
    expect(bad((o) => (o.verdict = 'x'.repeat(10_000)))).toThrow(/verdict/);
    expect(bad((o) => ((o.processes as Record<string, unknown>[])[0].fate = 'zombie'))).toThrow(/processes\[0\]\.fate/);
  });

  it('keeps the kill on its process when a report leaves others out', async () => {
    const j = await oomJob();
    const v = postmortemView(j);
    const ki = v.kill!.processIndex!;
    const kept = [ki];
    const w = viewForProcesses(v, kept);
    expect(w.kill!.processIndex).toBe(0);
    expect(w.processes.map((p) => p.pid)).toEqual([expected.kill.pid]);
    const other = j.processes.findIndex((p) => p.pid === expected.trainer.pid);
    expect(viewForProcesses(v, [other]).kill!.processIndex).toBeNull();
  });
});
