// The desktop app's engine entry, under Node with a MessagePort stand-in (the Electron binary cannot be had here):
// the main process hands a port over the parent port, the renderer's end asks, the engine opens the dropped paths
// and answers as the browser worker would.
import { EventEmitter } from 'node:events';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { join } from 'node:path';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { FromEngine, LoadEnd, Request } from '../../core/engine/api.js';
import { applyJobSoFar } from '../../core/engine/job-so-far.js';
import type { JobSummary } from '../../core/query/job-summary.js';
import { FileAccess } from '../../app/file-access.js';
import { enginePaths } from '../../renderer/src/lib/dataset-open.js';
import { runCaptured } from '../cli/run-captured.js';
import { NodeEngine } from './engine.js';
import { startPortEngine, type EnginePort, type ParentPortLike } from './port.js';

/** Node's MessagePort as Electron's MessagePortMain behaves: 'message' events carry { data }. */
function electronLike(port: MessagePort): EnginePort {
  return {
    postMessage: (msg) => port.postMessage(msg),
    on: (event: 'message' | 'close', listener: (ev: { data: unknown }) => void) => {
      if (event === 'message') port.on('message', (data: unknown) => listener({ data }));
      else port.on('close', () => (listener as () => void)());
    },
    start: () => port.start(),
  } as EnginePort;
}

/** The utility process's engine with one window's port: the renderer's side asks and hears its progress. */
function desktopEngine() {
  const parent = new EventEmitter();
  const engine = startPortEngine(parent as unknown as ParentPortLike, () => null);
  const { port1, port2 } = new MessageChannel();
  parent.emit('message', { data: { kind: 'connect' }, ports: [electronLike(port1)] });
  const answers = new Map<number, (m: FromEngine) => void>();
  const progress: number[] = [];
  // each load's job so far as the renderer puts it together (state/job.svelte.ts), by request id
  const soFar = new Map<number, JobSummary | null>();
  port2.on('message', (m: FromEngine) => {
    if ('progress' in m) {
      progress.push(m.id);
      const d = m.progress.partialDelta;
      if (d) soFar.set(m.id, applyJobSoFar(soFar.get(m.id) ?? null, d));
    } else if ('id' in m) answers.get(m.id)?.(m);
  });
  /** A load's full summary as the renderer gets it: whole, or put together from the job so far and the end's delta */
  const loaded = (id: number, end: LoadEnd): JobSummary | null =>
    end.summary ?? applyJobSoFar(soFar.get(id) ?? null, end.delta);
  const ask = (id: number, req: Request): Promise<FromEngine> =>
    new Promise((resolve) => {
      answers.set(id, resolve);
      port2.postMessage({ id, req });
    });
  const close = (): void => {
    port2.close();
    engine.close();
  };
  return { parent, ask, progress, loaded, close };
}

describe('the desktop app engine over a port', () => {
  it('opens dropped paths and answers the renderer', async () => {
    const { parent, ask, progress, loaded, close } = desktopEngine();
    try {
      const info = await ask(1, { type: 'engineInfo' });
      expect(info).toMatchObject({ ok: true, res: { info: { kind: 'node', served: null } } });
      const job = join(import.meta.dirname, '../../fixtures/jemalloc/job');
      // nothing opens before the main process granted it (the user's drop)
      const early = await ask(5, { type: 'openPaths', paths: [job] });
      expect(early).toMatchObject({ ok: false, error: `not opened by the user: ${job}` });
      parent.emit('message', { data: { grant: realpathSync(job) }, ports: [] });
      const outside = await ask(6, { type: 'openPaths', paths: [join(job, '..', 'bin')] });
      expect(outside).toMatchObject({ ok: false });
      const opened = await ask(2, { type: 'openPaths', paths: [job] });
      expect(opened).toMatchObject({ ok: true, res: { type: 'openPaths' } });
      const pids =
        'res' in opened && opened.res.type === 'openPaths'
          ? loaded(2, opened.res)
              ?.processes.map((p) => p.pid)
              .sort()
          : [];
      // the fixture's three processes (fixtures/jemalloc/job: leaky 21459, 21461 and python 21466)
      expect(pids).toEqual([21459, 21461, 21466]);
      expect(progress).toContain(2);
      const s = await ask(3, { type: 'suspects', view: { mode: 'python-first', hideAllocator: true }, limit: 3 });
      expect(s).toMatchObject({ ok: true, res: { type: 'suspects' } });
      const bad = await ask(4, { type: 'openPaths', paths: [] });
      expect(bad).toMatchObject({ ok: false, error: 'openPaths needs a list of paths' });
    } finally {
      close();
    }
  }, 60_000);

  it("opens two nodes' datasets dropped together as one job, the job `heaplens open ds-a ds-b` serves", async () => {
    // each node's folder of the real two-node job ingested alone, as on that node
    const dir = mkdtempSync(join(tmpdir(), 'heaplens-port-datasets-'));
    const fixture = join(import.meta.dirname, '../../fixtures/two-node-job');
    const expected = JSON.parse(readFileSync(join(fixture, 'expected.json'), 'utf8')) as {
      nodes: Record<string, { launcher: { pid: number }; workers: { pid: number }[] }>;
    };
    const datasets = ['node-a', 'node-b'].map((n) => join(dir, `${n}.dataset`));
    const { parent, ask, loaded, close } = desktopEngine();
    try {
      for (const [i, node] of ['node-a', 'node-b'].entries()) {
        const r = await runCaptured('ingest', join(fixture, node), '-o', datasets[i], '--no-symbols');
        expect(r.code, r.err).toBe(0);
      }
      // the main process's side of a drop (app/ipc-handlers.ts openDropped): each folder granted, the grant handed
      // to the engine process (app/main.ts), and listed file by file for the renderer
      const files = new FileAccess();
      files.onGrant = (real) => parent.emit('message', { data: { grant: real }, ports: [] });
      const listed = [];
      for (const d of datasets) listed.push(...(await files.list(await files.grant(d))));
      expect(listed.length).toBeGreaterThan(2);
      // the renderer's side (state/job.svelte.ts load): what it asks the Node engine to open
      const paths = enginePaths(
        listed.map((e) => ({ path: e.relativePath, size: e.size, mtimeMs: e.mtimeMs, hostPath: e.path })),
      );
      expect(paths).toEqual(datasets.map((d) => realpathSync(d)));
      const opened = await ask(1, { type: 'openPaths', paths: paths! });
      if (!('res' in opened) || opened.res.type !== 'openPaths') throw new Error(JSON.stringify(opened));
      const summary = loaded(1, opened.res)!;
      const shown = (s: JobSummary) =>
        s.processes.map((p) => ({ host: p.host, pid: p.pid, key: p.key, last: p.lastLiveBytes }));
      // every process of both nodes (the launchers' own counters), each on its node
      const want = Object.entries(expected.nodes).flatMap(([node, n]) =>
        [n.launcher, ...n.workers].map((w) => `${node}:${w.pid}`),
      );
      expect(
        shown(summary)
          .map((p) => `${p.host}:${p.pid}`)
          .sort(),
      ).toEqual(want.sort());
      // the job `heaplens open ds-a ds-b` serves
      const served = new NodeEngine({
        paths: datasets,
        allowPaths: false,
        symbols: null,
        info: { kind: 'node', label: 'open' },
        reportApp: () => null,
      });
      try {
        expect(shown(summary)).toEqual(shown((await served.servedJob())!));
      } finally {
        served.close();
      }
    } finally {
      close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
