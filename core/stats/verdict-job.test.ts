// Patterns, groups, post-mortem and σ on the real multi-process job (fixtures/job) and the repeated
// sampling runs (fixtures/sigma), against the workloads' own arithmetic (expected.json), never our output.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { rankJob } from './suspects.js';
import { postmortem } from './postmortem.js';
import {
  dumpName,
  expectedJob,
  innermostPython,
  jobFiles,
  workloadTags,
  JOB_FIXTURE,
} from '../../fixtures/job/job-fixture.js';
import type { Job, ProcessSeries } from '../model/model.js';
import { nodeInputFile } from '../../node/io/node-files.js';
import { viewStack } from '../frames/python-stacks.js';
import { stackFrames } from '../model/model.js';

const ex = expectedJob();
const tags = workloadTags();
let cached: Job | null = null;
async function job(): Promise<Job> {
  cached ??= await loadJob(jobFiles());
  return cached;
}
const proc = (j: Job, role: string): ProcessSeries =>
  j.processes.find((p) => p.pid === ex.processes.find((e) => e.role === role)!.pid)!;
const role = (p: ProcessSeries): string => ex.processes.find((e) => e.pid === p.pid)!.role;

/** Stack ids of `p` allocating at `site` (innermost Python frame = the site's function at its # @tag line). */
function siteStacks(p: ProcessSeries, site: string): number[] {
  const s = ex.sites[site];
  const line = tags.get(s.tag)!.line;
  return [...Array(p.stacks.count).keys()].filter((id) => {
    const py = innermostPython(p, id);
    return py !== null && py.function === s.function && py.line === line;
  });
}

/** The pattern the workload's arithmetic gives a site in a process (expected.json), from its truth per dump. */
function expectedPattern(p: ProcessSeries, site: string): string {
  const planned = /^\w+/.exec(ex.sites[site].pattern)![0]; // "flat (inherited by …)" → flat
  const e = ex.processes.find((x) => x.pid === p.pid)!;
  const first = p.snapshots[0];
  const truth = e.dumps.find((d) => d.file === dumpName(first.file))?.sites[site];
  // a dump taken while the weights were loading saw part of them: at dump resolution that is a step
  if (planned === 'flat' && truth && e.end && truth[1] < e.end.sites[site]) return 'step';
  return planned;
}

describe('growth patterns on the job fixture match the workload arithmetic', () => {
  it('leak steady, replay and episode buffers plateau, optimizer step, weights flat (step where a dump saw them loading)', async () => {
    const j = await job();
    const r = rankJob(j);
    let checked = 0;
    for (const [site, s] of Object.entries(ex.sites)) {
      if (s.pattern.startsWith('transient')) continue;
      for (const p of j.processes) {
        const ids = siteStacks(p, site);
        if (ids.length === 0) continue;
        const pi = j.processes.indexOf(p);
        for (const id of ids) {
          const v = r.stacks.find((x) => x.processIndex === pi && x.stackId === id)!;
          expect(v.pattern, `${role(p)} ${site}`).toBe(expectedPattern(p, site));
          checked++;
        }
      }
    }
    // leak ×2, replay, optimizer, weights ×4, episode ×3, eval-weights
    expect(checked).toBeGreaterThanOrEqual(12);
  });

  it('the leak ranks first job-wide; the 32 MiB replay buffer and the 16 MiB optimizer state score 0', async () => {
    const j = await job();
    const r = rankJob(j);
    const top = r.groups[0];
    const p = j.processes[top.top.processIndex];
    expect(innermostPython(p, top.top.stackId)?.function).toBe(ex.sites.leak.function);
    expect(top.pattern).toBe('steady');
    for (const site of ['replay', 'optimizer']) {
      const t = proc(j, 'trainer');
      const pi = j.processes.indexOf(t);
      for (const id of siteStacks(t, site))
        expect(r.stacks.find((x) => x.processIndex === pi && x.stackId === id)!.score, site).toBe(0);
    }
    // rollout-0's leak: 200 × 256 KiB by the end; its Δ within 3σ of the truth (first dump's truth to the end's)
    const r0 = proc(j, 'rollout-0');
    const e0 = ex.processes.find((e) => e.pid === r0.pid)!;
    const pi0 = j.processes.indexOf(r0);
    const [leak] = siteStacks(r0, 'leak').map((id) =>
      r.stacks.find((x) => x.processIndex === pi0 && x.stackId === id)!,
    );
    const lastFile = dumpName(r0.snapshots[r0.snapshots.length - 1].file);
    const t1 = e0.dumps.find((d) => d.file === lastFile)?.sites.leak ?? [e0.end!.sites.leak, e0.end!.sites.leak];
    const t0 = e0.dumps.find((d) => d.file === dumpName(r0.snapshots[0].file))!.sites.leak;
    const truthDelta = (t1[0] + t1[1]) / 2 - (t0[0] + t0[1]) / 2;
    expect(Math.abs(leak.deltaBytes - truthDelta)).toBeLessThan(
      3 * leak.sigmaDeltaBytes + (t1[1] - t1[0]) + (t0[1] - t0[0]),
    );
  });
});

describe('groups across processes (stack identity) on the job fixture', () => {
  it('inherited weights: one group of the trainer and its three forked rollouts; the evaluator (spawned) loads its own', async () => {
    const j = await job();
    const r = rankJob(j);
    const groupOf = (p: ProcessSeries, site: string): number[] => {
      const pi = j.processes.indexOf(p);
      return [
        ...new Set(
          siteStacks(p, site).map((id) => r.stacks.find((x) => x.processIndex === pi && x.stackId === id)!.group),
        ),
      ];
    };
    const forked = ex.processes.filter((e) => e.start === 'fork').map((e) => e.pid);
    const trainer = proc(j, 'trainer');
    const [wg] = groupOf(trainer, 'weights');
    expect(groupOf(trainer, 'weights')).toHaveLength(1);
    expect([...r.groups[wg].processes].sort()).toEqual([trainer.pid, ...forked].sort());
    // the leak: rollout-0 and rollout-2 (rollout-1 does not leak)
    const [lg] = groupOf(proc(j, 'rollout-0'), 'leak');
    expect(groupOf(proc(j, 'rollout-2'), 'leak')).toEqual([lg]);
    expect([...r.groups[lg].processes].sort()).toEqual([proc(j, 'rollout-0').pid, proc(j, 'rollout-2').pid].sort());
    // the episode buffer in every rollout
    const [eg] = groupOf(proc(j, 'rollout-1'), 'episode');
    expect(r.groups[eg].processes.length).toBe(forked.length);
    // the evaluator's weights are another site: their own group
    const [evg] = groupOf(proc(j, 'evaluator'), 'eval-weights');
    expect(r.groups[evg].processes).toEqual([proc(j, 'evaluator').pid]);
  });
});

describe('post-mortem on the job fixture', () => {
  it('rollout-2 (SIGKILLed, last dump cut) died; its last complete dump is the one before the cut; the others exited', async () => {
    const j = await job();
    const pm = postmortem(j);
    const killed = ex.processes.filter((e) => e.exit.signal === 9).map((e) => e.pid);
    expect(pm.died.map((i) => j.processes[i].pid)).toEqual(killed);
    const r2 = proc(j, 'rollout-2');
    const p = pm.processes[j.processes.indexOf(r2)];
    const e2 = ex.processes.find((e) => e.pid === r2.pid)!;
    expect(p.fate.evidence.join(' ')).toMatch(/cut off/);
    const complete = e2.dumps.filter((d) => d.file !== e2.cutDump!.file);
    expect(dumpName(r2.snapshots[p.fate.lastCompleteIndex].file)).toBe(complete[complete.length - 1].file);
    expect(p.lastKnownFromHeader).toBe(true);
    for (const q of pm.processes)
      if (q.pid !== r2.pid) expect(q.fate.killed, role(j.processes[q.processIndex])).toBe(false);
  });

  it("with the workload's own dump times: rollout-2's end rate per second holds the leak's 2 × 256 KiB per step", async () => {
    const j = await loadJob(jobFiles());
    for (const p of j.processes) {
      const e = ex.processes.find((x) => x.pid === p.pid)!;
      for (const s of p.snapshots) {
        const d = e.dumps.find((x) => x.file === dumpName(s.file));
        s.mtimeMs = d ? d.t * 1000 : null;
      }
    }
    const r2 = proc(j, 'rollout-2');
    const e2 = ex.processes.find((x) => x.pid === r2.pid)!;
    const pm = postmortem(j, 64 * 1024 ** 3);
    const p = pm.processes[j.processes.indexOf(r2)];
    expect(p.rate!.perSecond).not.toBeNull();
    // truth: leak bytes per second over the same late window, from the workload's per-dump counters
    const idx = p.rate!.points;
    const complete = e2.dumps.filter((d) => d.file !== e2.cutDump!.file).slice(-idx);
    const mid = (d: (typeof complete)[number]) => (d.sites.leak[0] + d.sites.leak[1]) / 2;
    const truthRate =
      (mid(complete[complete.length - 1]) - mid(complete[0])) / (complete[complete.length - 1].t - complete[0].t);
    expect(truthRate).toBeGreaterThan(0);
    console.log(
      `rollout-2 end rate ${(p.rate!.perSecond! / 1024).toFixed(0)} KiB/s [${(p.rate!.perSecondLo! / 1024).toFixed(0)}–${(p.rate!.perSecondHi! / 1024).toFixed(0)}], truth (leak) ${(truthRate / 1024).toFixed(0)} KiB/s`,
    );
    // the whole process grows at the leak's rate (its other sites are flat or transient): within the 95 % interval, ±10 %
    expect(p.rate!.perSecondLo! * 0.9).toBeLessThanOrEqual(truthRate);
    expect(p.rate!.perSecondHi! * 1.1).toBeGreaterThanOrEqual(truthRate);
    expect(p.projection!.secondsLo!).toBeLessThanOrEqual(p.projection!.seconds!);
    expect(p.projection!.secondsHi!).toBeGreaterThanOrEqual(p.projection!.seconds!);
  });
});

// ---- σ against repeated sampling (fixtures/sigma) -----------------------------------------------

const SIGMA = join(JOB_FIXTURE, '..', 'sigma', 'dumps');
interface SigmaRun {
  pid: number;
  samplePeriod: number;
  groups: Record<
    string,
    { objectBytes: number; objectsPerSite: number; trueBytesPerSite: number; functions: string[]; dump: string }
  >;
}

describe('σ from the model (Snapshot.liveVarBytes) against the spread of 8 independent runs (fixtures/sigma)', () => {
  it('per size group, the observed RMS error of 400 site estimates is 0.5–2× (and 0.8–1.25×) the model σ', async () => {
    const runs = readdirSync(SIGMA)
      .filter((n) => /^sigma\.\d+\.expected\.json$/.test(n))
      .map((n) => JSON.parse(readFileSync(join(SIGMA, n), 'utf8')) as SigmaRun);
    expect(runs.length).toBeGreaterThanOrEqual(4);
    const groups = new Map<string, { sq: number; model: number; n: number; inside: number }>();
    for (const run of runs) {
      const names = readdirSync(SIGMA).filter((n) => n.startsWith(`sigma.${run.pid}.`) && !n.endsWith('.json'));
      const files = names.map((n) => {
        const st = statSync(join(SIGMA, n));
        return nodeInputFile(join(SIGMA, n), `sigma/${n}`, st.size, st.mtimeMs);
      });
      const j = await loadJob(files);
      const p = j.processes[0];
      for (const [gname, g] of Object.entries(run.groups)) {
        const snap = p.snapshots.find((s) => dumpName(s.file) === g.dump)!;
        const want = new Set(g.functions);
        const est = new Map<string, { b: number; v: number }>();
        for (let i = 0; i < snap.stackIds.length; i++) {
          const hex = stackFrames(p.stacks, snap.stackIds[i]).map((a) => p.addresses.hex[a]);
          const py = viewStack(hex, p.pythonFrames ?? null, 'python').frames.find((f) => f.kind === 'python');
          if (!py || py.kind !== 'python' || !want.has(py.function)) continue;
          const e = est.get(py.function) ?? { b: 0, v: 0 };
          e.b += snap.liveBytes[i];
          e.v += snap.liveVarBytes[i];
          est.set(py.function, e);
        }
        const acc = groups.get(gname) ?? { sq: 0, model: 0, n: 0, inside: 0 };
        for (const fn of g.functions) {
          const e = est.get(fn) ?? { b: 0, v: 0 }; // a site with no sample: estimate 0
          acc.sq += (e.b - g.trueBytesPerSite) ** 2;
          acc.model += e.v;
          acc.n++;
          if (Math.abs(e.b - g.trueBytesPerSite) < 2 * Math.sqrt(e.v)) acc.inside++;
        }
        groups.set(gname, acc);
      }
    }
    expect(groups.size).toBe(3);
    for (const [gname, g] of groups) {
      const ratio = Math.sqrt(g.sq / g.n) / Math.sqrt(g.model / g.n);
      console.log(
        `σ check ${gname}: ${g.n} sites, observed/model = ${ratio.toFixed(2)}, within 2σ: ${((100 * g.inside) / g.n).toFixed(0)}%`,
      );
      expect(ratio, gname).toBeGreaterThan(0.5);
      expect(ratio, gname).toBeLessThan(2);
      expect(ratio, gname).toBeGreaterThan(0.8);
      expect(ratio, gname).toBeLessThan(1.25);
    }
  });
});
