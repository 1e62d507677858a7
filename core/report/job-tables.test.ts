// Issue 49 item 7: a report stores frames and stacks once per job, and its writer never emits what its reader
// refuses. The job is bench/generate-series.mjs's deep-stack job spread over hosts: the pids repeat on every host and
// a process's stacks are the generator's deepFrames(i, pid), so processes of one pid on several hosts share every
// stack — what the report's tables must hold follows from the generator's own arithmetic, not from our reader.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { Job, ProcessSeries } from '../model/model.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { buildReport, keptStacksRanked } from './build-report.js';
import { OTHER_ADDRESS } from './job-pack.js';
import { unpackJob } from './job-unpack.js';
import { reopenPayload } from './reopen.js';
import { REPORT_LIMITS, type ReportLimits } from './report-limits.js';

interface Generator {
  writeSeries: (dir: string, o: object) => number;
  deepFrames: (i: number, pid: number) => string;
}

const HOSTS = 3;
const PER_HOST = 2;
const STACKS = 24;
const DUMPS = 3;
const PIDS = Array.from({ length: PER_HOST }, (_, k) => 1000 + k);
let work = '';
let gen: Generator;
let job: Job;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'heaplens-job-tables-'));
  const generator = '../../bench/generate-series.mjs';
  gen = (await import(/* @vite-ignore */ generator)) as Generator;
  // growing 2: stacks 0 and 12 of every process grow by 5 objects a dump
  gen.writeSeries(join(work, 'job'), {
    processes: HOSTS * PER_HOST,
    snapshots: DUMPS,
    stacks: STACKS,
    depth: 26,
    deep: true,
    hosts: HOSTS,
    growing: 2,
  });
  job = await loadJob(await collectInputFiles([join(work, 'job')]));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The stacks of a process as text (hex frames, leaf first), as the generator writes them. */
const stackTexts = (p: ProcessSeries, ids: Iterable<number>): string[] =>
  [...ids].map((id) =>
    Array.from(
      p.stacks.frames.subarray(p.stacks.offsets[id], p.stacks.offsets[id + 1]),
      (a) => p.addresses.hex[a],
    ).join(' '),
  );
const liveSum = (p: ProcessSeries, si: number): number => p.snapshots[si].liveBytes.reduce((a, b) => a + b, 0);
/** float32 cells: each value within 2^-24 of itself, so a sum within that of its total */
const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1 + 1e-6 * Math.abs(b);

describe('a report of many processes that share their stacks', () => {
  it('stores each stack and each frame once for the whole job', () => {
    expect(job.processes).toHaveLength(HOSTS * PER_HOST);
    // the generator's stacks: one set per pid, shared by that pid on every host
    const stacks = new Map<string, string[]>();
    for (const pid of PIDS)
      for (let i = 0; i < STACKS; i++) {
        const text = gen.deepFrames(i, pid);
        stacks.set(text, text.split(' '));
      }
    const frames = [...stacks.values()].reduce((a, s) => a + s.length, 0);
    const addresses = new Set([...stacks.values()].flat());
    // Python frames: the capture's pseudo-addresses (0x7079…), each named in the sidecar's F table
    const python = [...addresses].filter((h) => h.startsWith('0x7079'));
    expect(stacks.size).toBe(PIDS.length * STACKS);
    expect(python.length).toBeGreaterThan(0);

    // topN above the stacks of a process: every stack is kept, none summed into "other"
    const { job: header, bytes } = buildReport(
      job.processes.map((proc) => ({ proc })),
      { topN: 50 },
    );
    expect(header.leftOut).toBeUndefined();
    expect(header.stacks.offsets.n - 1).toBe(stacks.size);
    expect(header.stacks.frames.n).toBe(frames);
    expect(header.frames.addresses).toHaveLength(addresses.size);
    expect(new Set(header.frames.addresses)).toEqual(addresses);
    expect(header.frames.python).toHaveLength(python.length);
    // each process refers to its own pid's stacks; per process they would have been HOSTS times as many frames
    expect(header.processes.map((p) => p.stacks.n)).toEqual(header.processes.map(() => STACKS));
    expect(header.processes.map((p) => p.otherStacks)).toEqual(header.processes.map(() => 0));

    // read back: every process has exactly its pid's stacks, its Python frames named as the sidecar names them
    const back = unpackJob(bytes).job;
    back.processes.forEach((p, k) => {
      const pid = job.processes[k].pid!;
      expect(new Set(stackTexts(p, p.stacks.offsets.slice(1).keys()))).toEqual(
        new Set(Array.from({ length: STACKS }, (_, i) => gen.deepFrames(i, pid))),
      );
      const addr = p.addresses.hex.find((h) => h.startsWith('0x7079'))!;
      const id = parseInt(addr.slice(7, 17), 16);
      expect(p.pythonFrames?.frames.get(addr)?.function).toBe(`Trainer.step_${id % 97}.<locals>.forward_chunk_${id}`);
      p.snapshots.forEach((s, si) => expect(close(liveSum(p, si), s.live.bytes)).toBe(true));
    });
  });
});

describe('a writer given more than the bounds', () => {
  // the counts this job's full report needs, then bounds below them
  const need = (): { processFrames: number; frames: number; stacks: number } => {
    const { job: h } = buildReport(
      job.processes.map((proc) => ({ proc })),
      { topN: 50 },
    );
    return {
      // + one "other" stack of one frame per process, as both sides count it
      processFrames: job.processes.reduce((a, p) => a + p.stacks.frames.length + 1, 0),
      frames: h.stacks.frames.n,
      stacks: h.stacks.offsets.n - 1,
    };
  };

  it('trims the quietest stacks into "other", says so, and the reader with those bounds accepts it', () => {
    const full = need();
    const full0 = buildReport(
      job.processes.map((proc) => ({ proc })),
      { topN: 50 },
    ).bytes;
    const cases: [string, Partial<ReportLimits>, RegExp][] = [
      [
        'frames laid out per process',
        { processFrames: Math.floor(full.processFrames / 2) },
        /processes\[\d+\]\.stacks: [\d,]+ processFrames in the report so far, more than the/,
      ],
      ["frames in the job's stack table", { frames: Math.floor(full.frames / 3) }, /stacks\.frames: [\d,]+ entries/],
      ['distinct stacks', { stacks: 10 }, /stacks\.offsets: [\d,]+ entries, more than the 11 a report holds/],
    ];
    for (const [what, small, refusal] of cases) {
      const limits: ReportLimits = { ...REPORT_LIMITS, ...small };
      // the untrimmed report is refused by a reader with these bounds: the bound is real
      expect(() => unpackJob(full0, limits), what).toThrow(refusal);
      const { job: header, bytes } = buildReport(
        job.processes.map((proc) => ({ proc })),
        { topN: 50, limits },
      );
      const left = header.leftOut!;
      expect(left, what).toBeDefined();
      expect(left.reason).toMatch(/^a report holds at most /);
      expect(left.reason).toContain(`the ${left.stacks.toLocaleString('en-US')} quietest kept stacks`);
      expect(left.stacks).toBe(header.processes.reduce((a, p) => a + p.trimmedStacks, 0));
      expect(left.processesTrimmed).toBe(header.processes.filter((p) => p.trimmedStacks > 0).length);
      const back = unpackJob(bytes, limits).job;
      const keptRanks: number[] = [];
      const goneRanks: number[] = [];
      back.processes.forEach((p, k) => {
        const orig = job.processes[k];
        const hp = header.processes[k];
        expect(hp.sourceIds.length + hp.trimmedStacks).toBe(STACKS);
        // nothing lost: what was trimmed is in the "other" stack, every snapshot's total whole
        if (hp.trimmedStacks > 0)
          expect(p.addresses.hex[p.stacks.frames[p.stacks.offsets[p.stacks.count - 1]]]).toBe(OTHER_ADDRESS);
        p.snapshots.forEach((s, si) => {
          expect(s.live.bytes).toBe(orig.snapshots[si].live.bytes);
          expect(close(liveSum(p, si), s.live.bytes), `${orig.key} snapshot ${si}`).toBe(true);
        });
        // the quietest went: no kept stack ranks below a trimmed one in the lists (build-report.ts keptStacksRanked)
        const ranks = keptStacksRanked(orig, hp.base, hp.target, 50, [], null);
        const keptIds = new Set(hp.sourceIds);
        for (const [id, r] of ranks) (keptIds.has(id) ? keptRanks : goneRanks).push(r);
      });
      expect(goneRanks).toHaveLength(left.stacks);
      expect(Math.max(...keptRanks), what).toBeLessThanOrEqual(Math.min(...goneRanks));
      // the default reader reads it too, and the page's banner and warnings say what was left out
      const reopened = reopenPayload(bytes);
      expect(reopened.session.source?.leftOut).toBe(left.reason);
      expect(reopened.job.warnings[0]).toEqual({ file: 'report', message: `left out: ${left.reason}` });
    }
  });

  it('leaves out the processes that grew least when it holds fewer processes than the job has', () => {
    const limits: ReportLimits = { ...REPORT_LIMITS, processes: 4 };
    const { job: header, bytes } = buildReport(
      job.processes.map((proc) => ({ proc })),
      { topN: 50, limits },
    );
    expect(header.processes).toHaveLength(4);
    expect(header.leftOut?.processes).toBe(2);
    expect(header.leftOut?.reason).toMatch(
      /^a report holds at most 4 processes and 200,000 snapshots \(the job has 6 and 18\): the 2 processes that grew least are left out/,
    );
    expect(unpackJob(bytes, limits).job.processes).toHaveLength(4);
  });
});
