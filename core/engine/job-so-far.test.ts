// The job so far sent as deltas (job-so-far.ts): put together update by update, each is the whole job so far the
// session summarized (QuerySession.showPartial: the processes read whole, the others from their dump heads), on the
// real job fixture (fixtures/job: five processes of a Python training job in a fork/spawn tree), read in the
// loader's order and in reverse (children before their parents: the tree's fields of processes already sent change).
import { beforeAll, describe, expect, it } from 'vitest';
import { loadJob } from '../load/load-job.js';
import { previewJob, type JobPreview } from '../load/job-preview.js';
import { webInflater } from '../formats/inflate.js';
import type { Job, ProcessSeries } from '../model/model.js';
import type { JobSummary } from '../query/job-summary.js';
import { QuerySession } from '../query/session.js';
import { jobFiles } from '../../fixtures/job/job-fixture.js';
import { applyJobSoFar, jobSoFarDeltas, type JobSoFarDelta } from './job-so-far.js';

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
