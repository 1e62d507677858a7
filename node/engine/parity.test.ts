// One engine, two places: every request type sent to the in-page engine (what the browser worker and the report
// page run: core/engine/answer.ts over a QuerySession loaded by core/engine/progressive-load.ts in this thread) and
// to the Node engine behind `heaplens open` (NodeEngine: worker-thread readers, node:zlib, over the real loopback
// server and WebSocket, each message through core/engine/wire.ts) must give equal answers on the fixture jobs.
// Only the load's own timings differ (how long it took, how many readers).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { answer } from '../../core/engine/answer.js';
import { loadProgressively } from '../../core/engine/progressive-load.js';
import type { FromEngine, Query, Request, Response } from '../../core/engine/api.js';
import { decodeMessage, encodeMessage } from '../../core/engine/wire.js';
import { applyJobSoFar } from '../../core/engine/job-so-far.js';
import { classifyFiles } from '../../core/load/load-job.js';
import type { JobSummary } from '../../core/query/job-summary.js';
import { QuerySession } from '../../core/query/session.js';
import { emptySession } from '../../core/notes/schema.js';
import type { ViewOptions } from '../../core/model/vocab.js';
import { collectInputFiles } from '../io/node-files.js';
import { NodeEngine } from './engine.js';
import { serveEngine, type Served } from './server.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures');
const JOBS = ['jemalloc/job', 'job/dumps', 'oom-job', 'torch/snapshot-p4.pickle'];
const REPORT_APP = { js: 'window.__report = 1;', css: 'body{}' };
const VIEWS: ViewOptions[] = [
  { mode: 'python-first', hideAllocator: true },
  { mode: 'merged', hideAllocator: false },
];

/** The in-page engine: what the worker runs, in this thread, without its transport. */
async function inPage(paths: string[]): Promise<(req: Request) => Promise<Response>> {
  const session = new QuerySession();
  const files = await collectInputFiles(paths);
  const ctrl = new AbortController();
  await loadProgressively({
    session,
    files,
    classified: await classifyFiles(files, ctrl.signal),
    readers: null,
    inflate: null,
    memoryBudget: 2e9,
    signal: ctrl.signal,
    post: () => undefined,
    symbolize: async () => undefined,
  });
  return async (req) => (await answer(session, req as Query, { reportApp: REPORT_APP })).res;
}

/** The Node engine over its server: a client as the page is one. */
async function overNode(paths: string[]): Promise<{
  ask: (req: Request) => Promise<Response>;
  /** the job's summary as the page has it at the load's end */
  opened: JobSummary | null;
  sentWhole: boolean;
  close: () => Promise<void>;
}> {
  const page = mkdtempSync(join(tmpdir(), 'heaplens-parity-'));
  writeFileSync(join(page, 'index.html'), '<html><head></head></html>');
  const engine = new NodeEngine({
    paths,
    allowPaths: false,
    symbols: null,
    info: { kind: 'node', label: 'parity' },
    reportApp: () => REPORT_APP,
    readers: 2,
  });
  const served: Served = await serveEngine({ engine, pageDir: page, port: 0 });
  const ws = new WebSocket(`ws://127.0.0.1:${served.port}/${served.token}/engine`, {
    headers: { Origin: `http://127.0.0.1:${served.port}` },
  });
  await new Promise((resolve, reject) => {
    ws.on('open', resolve);
    ws.on('error', reject);
  });
  let next = 1;
  const waiting = new Map<number, (m: FromEngine) => void>();
  // the job so far as the page puts it together from the load's progress (renderer/src/state/job.svelte.ts)
  let soFar: JobSummary | null = null;
  ws.on('message', (data: Buffer) => {
    const msg = decodeMessage(new Uint8Array(data)) as FromEngine;
    if ('progress' in msg) {
      if (msg.progress.partial) soFar = msg.progress.partial;
      if (msg.progress.partialDelta) soFar = applyJobSoFar(soFar, msg.progress.partialDelta);
    } else if ('id' in msg) waiting.get(msg.id)?.(msg);
  });
  const ask = (req: Request): Promise<Response> =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, (m) => {
        waiting.delete(id);
        if ('ok' in m && m.ok) resolve(m.res);
        else reject(new Error('error' in m ? m.error : 'no answer'));
      });
      ws.send(encodeMessage({ id, req }));
    });
  const end = (await ask({ type: 'open' })) as Extract<Response, { type: 'open' }>;
  return {
    ask,
    opened: end.summary ?? applyJobSoFar(soFar, end.delta),
    sentWhole: end.summary !== undefined,
    close: async () => {
      ws.close();
      await served.close();
      engine.close();
    },
  };
}

/** A summary without the load's own figures (time taken, readers), which differ by engine by design. */
function comparable(s: JobSummary): unknown {
  return { ...s, loadMs: 0, readWaitMs: 0, readers: 0 };
}

function normalize(r: Response): unknown {
  if ('summary' in r && r.summary && r.type !== 'missingBinaries') return { ...r, summary: comparable(r.summary) };
  // a listing's frames are the job's shared frame objects, which carry the row key's symbol-keyed tag in this
  // thread (core/query/row-key.ts); no transport carries a symbol key, so compare what the CLI prints
  if (r.type === 'top' || r.type === 'diff' || r.type === 'growthListing' || r.type === 'postmortemListing')
    return JSON.parse(JSON.stringify(r)) as unknown;
  return r;
}

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of closers) await c();
});

describe.each(JOBS)('engine parity on fixtures/%s', (rel) => {
  it('answers every request type the same in the page and in Node', async () => {
    const paths = [join(FIXTURES, rel)];
    const page = await inPage(paths);
    const node = await overNode(paths);
    closers.push(node.close);
    const both = async (req: Request): Promise<Response> => {
      const [a, b] = await Promise.all([page(req), node.ask(req)]);
      expect(normalize(b), JSON.stringify(req).slice(0, 200)).toEqual(normalize(a));
      return a;
    };
    const summary = (await both({ type: 'summary' })) as Extract<Response, { type: 'summary' }>;
    const procs = summary.summary.processes;
    expect(procs.length).toBeGreaterThan(0);
    // the load ended on what changed since its last job so far, and put together it is the summary sent whole
    expect(node.sentWhole).toBe(false);
    const whole = (await node.ask({ type: 'summary' })) as Extract<Response, { type: 'summary' }>;
    expect(node.opened).toStrictEqual(whole.summary);
    // a page that attaches after the load (a reload) gets the whole summary
    const again = (await node.ask({ type: 'open' })) as Extract<Response, { type: 'open' }>;
    expect(again.delta).toBeUndefined();
    expect(again.summary).toStrictEqual(whole.summary);
    await both({ type: 'postmortem', limit: { bytes: 1 << 30, source: 'typed in the app' } });
    await both({ type: 'postmortem', limit: null });
    // the CLI's other commands (`heaplens summary`, `binaries`, `postmortem` print these answers)
    await both({ type: 'summaryListing', sample: null });
    await both({ type: 'summaryListing', sample: 'alloc_space' });
    await both({ type: 'binariesListing', snapshot: null, includeAllocator: false });
    await both({ type: 'binariesListing', snapshot: 'first', includeAllocator: true });
    await both({ type: 'postmortemListing', view: VIEWS[0], n: 10, limit: null, scope: 'job' });
    await both({
      type: 'postmortemListing',
      view: { ...VIEWS[1], sample: 'inuse_objects' },
      n: 3,
      limit: { bytes: 1 << 30, source: '1G', note: null },
      scope: 'process',
    });
    let asked = 0;
    for (const view of VIEWS) {
      await both({ type: 'suspects', view, limit: 20 });
      // `heaplens growth`
      await both({ type: 'growthListing', view, n: 20 });
      await both({ type: 'growthListing', view: { ...view, sample: 'inuse_objects' }, n: 3 });
      // the CLI's listings (`heaplens top`/`diff` print these answers)
      await both({ type: 'top', view, granularity: 'lines', n: 10, snapshot: null });
      await both({
        type: 'top',
        view: { ...view, sample: 'inuse_objects' },
        granularity: 'functions',
        n: 5,
        snapshot: 'first',
      });
      await both({ type: 'diff', view, granularity: 'lines', n: 10, base: null, target: null, files: null });
      for (let proc = 0; proc < procs.length; proc++) {
        const snaps = procs[proc].snapshots.length;
        const target = snaps - 1;
        await both({ type: 'stackSeries', proc, n: 8, view });
        const g = (await both({ type: 'growth', proc, base: 0, target, view, limit: 30 })) as Extract<
          Response,
          { type: 'growth' }
        >;
        await both({ type: 'flame', proc, snapshot: target, base: null, view });
        await both({ type: 'flame', proc, snapshot: target, base: 0, view, shape: { kind: 'inverted', by: 'growth' } });
        await both({ type: 'missingBinaries', proc, snapshot: target, view });
        await both({ type: 'gpuTimeline', proc, maxPoints: 300 });
        const rows = g.growth.stacks.slice(0, 3);
        for (const row of rows)
          await both({ type: 'stack', proc, stackId: row.stackId, members: row.members, base: 0, target, view });
        const ids = rows.map((r) => r.stackId);
        const t = (await both({ type: 'stackTargets', proc, stackIds: ids })) as Extract<
          Response,
          { type: 'stackTargets' }
        >;
        await both({ type: 'resolveStacks', targets: t.targets });
        for (const format of ['pprof', 'folded', 'speedscope'] as const)
          await both({
            type: 'export',
            format,
            procs: [proc],
            snapshot: 'last',
            focus: { proc, snapshot: target },
            view,
          });
        asked++;
      }
    }
    expect(asked).toBe(procs.length * VIEWS.length);
    const report = {
      type: 'report' as const,
      procs: procs.map((_, i) => i),
      base: 0,
      target: procs[0].snapshots.length - 1,
      session: emptySession('parity'),
      title: 'parity',
      sanitize: {},
      view: VIEWS[0],
      previewOnly: true,
    };
    await both(report);
    // the whole report from each engine, each reopened by the other: the same job comes back
    type ReportRes = Extract<Response, { type: 'report' }>;
    const [fromPage, fromNode] = (await Promise.all([
      page({ ...report, previewOnly: false }),
      node.ask({ ...report, previewOnly: false }),
    ])) as [ReportRes, ReportRes];
    expect(fromPage.html).toContain('parity');
    expect(fromNode.preview).toEqual(fromPage.preview);
    const [a, b] = await Promise.all([
      page({ type: 'reopenReport', html: fromNode.html ?? '' }),
      node.ask({ type: 'reopenReport', html: fromNode.html ?? '' }),
    ]);
    expect(normalize(b)).toEqual(normalize(a));
    // the page's report holds the same job as Node's (only its creation time differs)
    const c = (await node.ask({ type: 'reopenReport', html: fromPage.html ?? '' })) as Extract<
      Response,
      { type: 'reopenReport' }
    >;
    expect(comparable(c.summary)).toEqual(comparable((a as typeof c).summary));
    await both({ type: 'suspects', view: VIEWS[0], limit: 5 });
    await both({ type: 'close' });
  }, 240_000);
});
