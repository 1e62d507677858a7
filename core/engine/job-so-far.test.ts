// The job so far sent as deltas (job-so-far.ts): put together update by update, each is the whole job so far the
// session summarized (QuerySession.showPartial: the processes read whole, the others from their dump heads), on the
// real job fixture (fixtures/job: five processes of a Python training job in a fork/spawn tree), read in the
// loader's order and in reverse (children before their parents: the tree's fields of processes already sent change).
import { mkdtempSync, rmSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { previewJob, type JobPreview } from '../load/job-preview.js';
import { webInflater } from '../formats/inflate.js';
import type { Job, ProcessSeries } from '../model/model.js';
import type { JobSummary, WarningSummary } from '../query/job-summary.js';
import { QuerySession } from '../query/session.js';
import { jobFiles } from '../../fixtures/job/job-fixture.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { classifyFiles } from '../load/load-job.js';
import { applyJobSoFar, jobSoFarDeltas, type JobSoFarDelta } from './job-so-far.js';
import { loadProgressively } from './progressive-load.js';
import { decodeMessage, encodeMessage } from './wire.js';

let job: Job;
let preview: JobPreview;
beforeAll(async () => {
  const files = jobFiles();
  [job, preview] = await Promise.all([loadJob(files), previewJob(files, { inflate: webInflater() })]);
}, 120_000);

/** The session's job so far after each process read, in `order`, and the deltas the load sends of them. */
function updates(order: readonly ProcessSeries[]): { full: JobSummary[]; deltas: JobSoFarDelta[] } {
  const s = new QuerySession();
  const delta = jobSoFarDeltas();
  const full: JobSummary[] = [];
  const deltas: JobSoFarDelta[] = [];
  for (let n = 1; n <= order.length; n++) {
    const read = order.slice(0, n);
    const sum = s.showPartial(read, [], preview, 1);
    // through JSON, as the Node engine's WebSocket carries it
    deltas.push(JSON.parse(JSON.stringify(delta(sum, read))) as JobSoFarDelta);
    full.push(JSON.parse(JSON.stringify(sum)) as JobSummary);
  }
  return { full, deltas };
}

describe('the job so far as deltas', () => {
  it('put together update by update, each is the whole job so far; only new processes are sent again', () => {
    expect(job.processes.length).toBeGreaterThanOrEqual(5);
    const { full, deltas } = updates(job.processes);
    let shown: JobSummary | null = null;
    for (const [k, d] of deltas.entries()) {
      shown = applyJobSoFar(shown, d);
      expect(shown).toEqual(full[k]);
      expect(d.read).toBe(k + 1);
      // the first sends the pending processes (dump heads); later ones only name how many are read
      if (k === 0) expect(d.pending).toHaveLength(job.processes.length - 1);
      else expect(d.pending).toBeNull();
      // the warnings the last update sent are not sent again
      if (k > 0 && isDeepStrictEqual(full[k].warnings, full[k - 1].warnings)) expect(d.warnings.added).toEqual([]);
    }
    // every process read whole is sent at least once, and the deltas together are far less than the updates
    const sent = deltas.reduce((a, d) => a + d.changed.length, 0);
    expect(sent).toBeGreaterThanOrEqual(job.processes.length);
    expect(sent).toBeLessThan(full.reduce((a, f) => a + f.processes.filter((p) => !p.pending).length, 0));
  });

  it('children read before their parents: the processes whose place in the tree changed are sent again', () => {
    const { full, deltas } = updates([...job.processes].reverse());
    let shown: JobSummary | null = null;
    for (const [k, d] of deltas.entries()) {
      shown = applyJobSoFar(shown, d);
      expect(shown).toEqual(full[k]);
    }
    // a parent read after its child changes the child's parentIndex (the fixture's tree has parents)
    expect(full.at(-1)!.processes.some((p) => p.identity?.parentIndex !== null)).toBe(true);
    expect(deltas.some((d) => d.changed.length > 1)).toBe(true);
  });

  it('a window that attaches under way gets the whole job so far, then the deltas apply to it', () => {
    const { full, deltas } = updates(job.processes);
    let shown: JobSummary | null = full[1];
    for (let k = 2; k < deltas.length; k++) {
      shown = applyJobSoFar(shown, deltas[k]);
      expect(shown).toEqual(full[k]);
    }
    // a delta with nothing to apply to is refused, not shown with holes
    expect(applyJobSoFar(null, deltas[2])).toBeNull();
  });

  it('warnings: those of the last update kept, the new ones sent; a list changed ahead of them sent whole', () => {
    const s = new QuerySession();
    const delta = jobSoFarDeltas();
    const w = (n: number): WarningSummary => ({ file: `d${n}.heap`, message: `warning ${n}`, kind: 'other' });
    const lists = [[w(1)], [w(1), w(2), w(3)], [w(1), w(2), w(3)], [w(0), w(1), w(2), w(3)], [w(0)]];
    let shown: JobSummary | null = null;
    const sent: JobSoFarDelta['warnings'][] = [];
    for (const [k, warnings] of lists.entries()) {
      const read = job.processes.slice(0, Math.min(k + 1, job.processes.length));
      const sum = { ...s.showPartial(read, [], preview, 1), warnings };
      const d = JSON.parse(JSON.stringify(delta(sum, read))) as JobSoFarDelta;
      sent.push(d.warnings);
      shown = applyJobSoFar(shown, d);
      expect(shown?.warnings).toEqual(warnings);
    }
    expect(sent).toEqual([
      { kept: 0, added: [w(1)] },
      { kept: 1, added: [w(2), w(3)] },
      { kept: 3, added: [] },
      { kept: 0, added: [w(0), w(1), w(2), w(3)] },
      { kept: 1, added: [] },
    ]);
  });

  it("each update's summary is the job so far summarized anew (each process's own part is made once a load)", () => {
    for (const order of [job.processes, [...job.processes].reverse()]) {
      const loading = new QuerySession();
      for (let n = 1; n <= order.length; n++) {
        const read = order.slice(0, n);
        expect(loading.showPartial(read, [], preview, 1)).toEqual(new QuerySession().showPartial(read, [], preview, 1));
      }
    }
  });
});

// A load as the Node engine runs it (progressive-load.ts), each message through the wire as the page gets it: the
// job so far update by update, then the load's end as what changed since the last, put together with them, is the
// full job's summary sent whole.
const FIXTURES = join(import.meta.dirname, '../../fixtures');
const wire = <T>(v: T): T => decodeMessage(encodeMessage(v)) as T;

/** The deltas a load posts (through the wire), its end's delta and its summary sent whole. */
async function load(paths: string[]): Promise<{ deltas: JobSoFarDelta[]; end: JobSoFarDelta; whole: JobSummary }> {
  const files = await collectInputFiles(paths);
  const ctrl = new AbortController();
  const deltas: JobSoFarDelta[] = [];
  const r = await loadProgressively({
    session: new QuerySession(),
    files,
    classified: await classifyFiles(files, ctrl.signal),
    readers: null,
    inflate: null,
    memoryBudget: 2e9,
    signal: ctrl.signal,
    post: (p) => {
      if (p.partialDelta) deltas.push(wire(p.partialDelta));
    },
    symbolize: async () => undefined,
  });
  return { deltas, end: wire(r.delta), whole: wire(r.summary) };
}

/** The page's picture: the job so far put together update by update, then the end's delta applied to it. */
function rebuilt(deltas: readonly JobSoFarDelta[], end: JobSoFarDelta): JobSummary | null {
  let shown: JobSummary | null = null;
  for (const d of deltas) shown = applyJobSoFar(shown, d);
  return applyJobSoFar(shown, end);
}

/** Fails when the rebuilt summary leaves out or gets wrong any field of the whole (undefined members included). */
function expectSame(deltas: readonly JobSoFarDelta[], end: JobSoFarDelta, whole: JobSummary): void {
  expect(rebuilt(deltas, end)).toStrictEqual(whole);
}

let generated = '';
afterAll(() => {
  if (generated) rmSync(generated, { recursive: true, force: true });
});

describe("the load's end as what changed since the job so far", () => {
  it.each(['job/dumps', 'jemalloc/job', 'oom-job', 'rss-log'])(
    'fixtures/%s: put together with the deltas before it, it is the full summary',
    async (rel) => {
      const { deltas, end, whole } = await load([join(FIXTURES, rel)]);
      expect(deltas.length).toBeGreaterThan(0);
      expect(end.seq).toBe(deltas.length);
      expectSame(deltas, end, whole);
    },
    120_000,
  );

  it('a generated job of 300 processes on 3 hosts: the end sends the processes the page has not, or not so', async () => {
    generated = mkdtempSync(join(tmpdir(), 'heaplens-final-delta-'));
    const generator = '../../bench/generate-series.mjs';
    const mod: unknown = await import(/* @vite-ignore */ generator);
    const { writeSeries } = mod as { writeSeries: (d: string, o: object) => number };
    writeSeries(generated, { processes: 300, snapshots: 3, stacks: 8, hosts: 3, growing: 2, outliers: 3 });
    const { deltas, end, whole } = await load([generated]);
    expect(whole.processes).toHaveLength(300);
    expectSame(deltas, end, whole);
    expect(end.pending).toBeNull();
    // the page's job so far before the end: its processes read whole are sent again only where the full job differs
    const shown = rebuilt(deltas.slice(0, -1), deltas.at(-1)!)!;
    const had = shown.processes.filter((p) => !p.pending);
    expect(had.length).toBeGreaterThan(0);
    const resent = new Set(end.changed.map((p) => p.index));
    for (const p of had) expect(resent.has(p.index)).toBe(!isDeepStrictEqual(p, whole.processes[p.index]));
    expect(end.changed).toHaveLength(300 - had.filter((p) => !resent.has(p.index)).length);
  }, 120_000);

  it('fails when a field of the summary is left out of the end or a process is missed', async () => {
    for (const rel of ['oom-job', 'jemalloc/job']) {
      const { deltas, end, whole } = await load([join(FIXTURES, rel)]);
      expectSame(deltas, end, whole);
      // every part of the summary but its processes (the post-mortem, verdict, warnings, load figures), left out
      const keys = Object.keys(end.rest) as (keyof JobSoFarDelta['rest'])[];
      expect(keys).toEqual(expect.arrayContaining(['postmortem', 'verdict', 'ignoredFiles', 'loadMs']));
      for (const k of keys) {
        const { [k]: _left, ...rest } = end.rest;
        expect(() => expectSame(deltas, { ...end, rest: rest as JobSoFarDelta['rest'] }, whole), k).toThrow();
      }
      // the warnings, where the end's differ from the last job so far's
      const before = rebuilt(deltas.slice(0, -1), deltas.at(-1)!)!;
      if (!isDeepStrictEqual(before.warnings, whole.warnings)) {
        expect(end.warnings.added.length).toBeGreaterThan(0);
        expect(() => expectSame(deltas, { ...end, warnings: { kept: end.warnings.kept, added: [] } }, whole)).toThrow();
      } else expect(end.warnings).toEqual({ kept: whole.warnings.length, added: [] });
      // a process the end sends, left out
      expect(end.changed.length).toBeGreaterThan(0);
      expect(() => expectSame(deltas, { ...end, changed: end.changed.slice(1) }, whole)).toThrow();
    }
  }, 120_000);
});
