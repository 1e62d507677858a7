// Reports of captures other than jemalloc dumps keep what the app shows of them (issue 45): a massif run's peak
// snapshot and its time in massif's own unit, checked against ms_print's report of the same file; a PyTorch
// snapshot's device over time, its peak and OOM, checked against the simulation's own figures
// (fixtures/torch/expected.json). Each goes through the report's payload and back, as the report page reads it.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import type { Job } from '../model/model.js';
import { collectInputFiles } from '../../node/io/node-files.js';
import { TORCH_FIXTURES, torchExpected } from '../../tools/fixtures.js';
import { jobSummary } from '../query/job-summary.js';
import { gpuTimeline } from '../query/gpu-timeline.js';
import { buildReport } from './build-report.js';
import { buildReportHtml } from './html.js';
import { reopenReport } from './reopen.js';
import { resolveSnapshot } from '../notes/notes.js';
import { readPayload, unpackJob } from './job-unpack.js';
import type { PackedJob } from './job-pack.js';
import { deflate } from 'pako';

const MASSIF = resolve(import.meta.dirname, '..', '..', 'fixtures', 'massif');
const APP = { js: 'document.getElementById("app").textContent = "report";', css: 'body{margin:0}' };

/** The job a report's page runs on: built, written as HTML, read back. */
async function throughReport(job: Job): Promise<Job> {
  const { job: header, bytes } = buildReport(job.processes.map((proc) => ({ proc })));
  const html = await buildReportHtml(bytes, { title: header.title, generator: header.generator }, APP);
  return reopenReport(html).job;
}

const summarize = (job: Job) =>
  jobSummary(job, { hasPython: () => false, loadMs: 0, waitMs: 0, bytesTotal: 0, partial: false });

/** ms_print's report: the time unit of its table's header, its peak snapshot, each snapshot's time. */
function msPrint(name: string): { unit: string; peak: number | null; times: Map<number, number> } {
  const text = readFileSync(join(MASSIF, `${name}.ms_print.txt`), 'utf8');
  const unit = /^\s+n\s+time\((\w+)\)/m.exec(text)![1];
  const peak = /Detailed snapshots: \[[^\]]*?(\d+) \(peak\)/.exec(text);
  const times = new Map<number, number>();
  for (const m of text.matchAll(/^\s+(\d+)\s+([\d,]+)\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+[\d,]+\s*$/gm))
    times.set(Number(m[1]), Number(m[2].replaceAll(',', '')));
  return { unit, peak: peak ? Number(peak[1]) : null, times };
}

describe('a massif run in a report', () => {
  it.each(['massif.out.grow', 'massif.out.pages', 'massif.out.inline'])(
    '%s: the peak snapshot marked and the time in massif’s unit, as ms_print gives them',
    async (name) => {
      const want = msPrint(name);
      expect(want.times.size).toBeGreaterThan(0);
      const job = await throughReport(await loadJob(await collectInputFiles([join(MASSIF, name)])));
      const p = summarize(job).processes[0];
      // the axis: massif's own unit (--time-unit), every snapshot at ms_print's time
      expect(p.time.massifUnit).toBe(want.unit);
      for (const s of p.snapshots) expect(s.massifTime, `snapshot ${s.seq}`).toBe(want.times.get(s.seq!));
      expect(p.snapshots.length).toBe(want.times.size);
      // the peak: the one snapshot massif marked, where ms_print says
      const peaks = p.snapshots.filter((s) => s.massifTree === 'peak').map((s) => s.seq);
      expect(peaks).toEqual(want.peak === null ? [] : [want.peak]);
    },
  );
});

describe("a report's selection on a massif run", () => {
  it('names its snapshots by their numbers: the page opens where the report was made, not on the first', async () => {
    const job = await loadJob(await collectInputFiles([join(MASSIF, 'massif.out.pages')]));
    const p = job.processes[0];
    // every snapshot of a massif run comes from the one file
    expect(new Set(p.snapshots.map((s) => s.file)).size).toBe(1);
    const { job: header, bytes } = buildReport([{ proc: p }]);
    const html = await buildReportHtml(bytes, { title: header.title, generator: header.generator }, APP);
    const back = reopenReport(html);
    const sel = back.session.selection;
    const [base, target] = [header.processes[0].base, header.processes[0].target];
    expect(target).toBeGreaterThan(0);
    expect(resolveSnapshot(back.job.processes[0], sel.base!)).toBe(base);
    expect(resolveSnapshot(back.job.processes[0], sel.target!)).toBe(target);
  });
});

describe('a PyTorch snapshot in a report', () => {
  it("each device's memory over time, its peak and its OOM as the simulation had them; it opens on the peak", async () => {
    const want = torchExpected();
    const loaded = await loadJob(await collectInputFiles([join(TORCH_FIXTURES, 'snapshot-p4.pickle')]));
    const job = await throughReport(loaded);
    const s = summarize(job);
    expect(s.processes.map((p) => p.gpuDevice)).toEqual(want.devices.map((d) => d.device));
    want.devices.forEach((d, i) => {
      const t = gpuTimeline(job.processes[i])!;
      expect(t.peak!.allocated).toBe(d.peak_allocated_bytes);
      expect(Math.max(...t.reserved)).toBe(d.peak_reserved_bytes);
      expect(t.timeMs[0]).toBe(d.first_time_us / 1000);
      expect(t.timeMs[t.timeMs.length - 1]).toBe(d.last_time_us / 1000);
      expect(t.ooms.map((o) => [o.timeMs, o.size, o.deviceFree])).toEqual(
        d.ooms.map((o) => [o.time_us / 1000, o.size, o.device_free]),
      );
      // the snapshot views open on holds the peak's bytes
      const open = s.processes[i].openSnapshot!;
      expect(s.processes[i].snapshots[open].liveBytes).toBe(d.peak_allocated_bytes);
      // the same as the app draws from the snapshot itself
      expect(t).toEqual(gpuTimeline(loaded.processes[i]));
    });
    expect(job.processes.reduce((a, p) => a + p.gpu!.spans.length, 0)).toBe(
      loaded.processes.reduce((a, p) => a + p.gpu!.spans.length, 0),
    );
  });
});

describe('damaged capture fields in a report', () => {
  it('are refused naming the field: a massif time, a device trace out of order, a peak past the snapshots', async () => {
    const massif = await loadJob(await collectInputFiles([join(MASSIF, 'massif.out.grow')]));
    const torch = await loadJob(await collectInputFiles([join(TORCH_FIXTURES, 'snapshot-p4.pickle')]));
    const { bytes } = buildReport([...massif.processes, ...torch.processes].map((proc) => ({ proc })));
    const { job: header, cols } = readPayload(bytes);
    const repack = (h: PackedJob): Uint8Array => {
      const json = new TextEncoder().encode(JSON.stringify(h));
      const pad = (4 - ((4 + json.length) % 4)) % 4;
      const raw = new Uint8Array(4 + json.length + pad + cols.length);
      new DataView(raw.buffer).setUint32(0, json.length, true);
      raw.set(json, 4);
      raw.set(cols, 4 + json.length + pad);
      return deflate(raw);
    };
    const damage = (f: (h: PackedJob) => void): (() => unknown) => {
      const h = structuredClone(header);
      f(h);
      return () => unpackJob(repack(h));
    };
    expect(() => unpackJob(repack(header))).not.toThrow();
    expect(
      damage((h) => {
        h.processes[0].snapshots[3].massif!.time = -1;
      }),
    ).toThrow(/processes\[0\]\.snapshots\[3\]\.massif\.time: /);
    expect(
      damage((h) => {
        h.processes[0].snapshots[3].massif!.tree = 'x' as never;
      }),
    ).toThrow(/processes\[0\]\.snapshots\[3\]\.massif\.tree: /);
    expect(
      damage((h) => {
        const t = h.processes[1].gpu!.timeline.timeMs;
        t[5] = t[4] - 1;
      }),
    ).toThrow(/processes\[1\]\.gpu\.timeline\.timeMs\[5\]: before the one before it/);
    expect(
      damage((h) => {
        h.processes[1].gpu!.peakSnapshot = 10_000;
      }),
    ).toThrow(/processes\[1\]\.gpu\.peakSnapshot: /);
    expect(
      damage((h) => {
        h.processes[1].gpu!.timeline.allocated[0] = Number.NaN;
      }),
    ).toThrow(/processes\[1\]\.gpu\.timeline\.allocated\[0\]: /);
  });
});
