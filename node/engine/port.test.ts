// The desktop app's engine entry, under Node with a MessagePort stand-in (the Electron binary cannot be had here):
// the main process hands a port over the parent port, the renderer's end asks, the engine opens the dropped paths
// and answers as the browser worker would.
import { EventEmitter } from 'node:events';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { join } from 'node:path';
import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { FromEngine, Request } from '../../core/engine/api.js';
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

describe('the desktop app engine over a port', () => {
  it('opens dropped paths and answers the renderer', async () => {
    const parent = new EventEmitter();
    const engine = startPortEngine(parent as unknown as ParentPortLike, () => null);
    const { port1, port2 } = new MessageChannel();
    parent.emit('message', { data: { kind: 'connect' }, ports: [electronLike(port1)] });
    const answers = new Map<number, (m: FromEngine) => void>();
    const progress: number[] = [];
    port2.on('message', (m: FromEngine) => {
      if ('progress' in m) progress.push(m.id);
      else if ('id' in m) answers.get(m.id)?.(m);
    });
    const ask = (id: number, req: Request): Promise<FromEngine> =>
      new Promise((resolve) => {
        answers.set(id, resolve);
        port2.postMessage({ id, req });
      });
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
        'res' in opened && opened.res.type === 'openPaths' ? opened.res.summary.processes.map((p) => p.pid).sort() : [];
      // the fixture's three processes (fixtures/jemalloc/job: leaky 21459, 21461 and python 21466)
      expect(pids).toEqual([21459, 21461, 21466]);
      expect(progress).toContain(2);
      const s = await ask(3, { type: 'suspects', view: { mode: 'python-first', hideAllocator: true }, limit: 3 });
      expect(s).toMatchObject({ ok: true, res: { type: 'suspects' } });
      const bad = await ask(4, { type: 'openPaths', paths: [] });
      expect(bad).toMatchObject({ ok: false, error: 'openPaths needs a list of paths' });
    } finally {
      port2.close();
      engine.close();
    }
  }, 60_000);
});
