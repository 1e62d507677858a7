// The Node engine behind `heaplens open` as the client's WorkerLike: the same messages over one WebSocket beside the
// page's own URL (its path holds the server's token), encoded by core/engine/wire.ts. Messages sent before the
// socket opens wait for it; when the engine goes away, onerror says so once (the window falls back to the
// in-page engine, state/shell.svelte.ts).

import { decodeMessage, encodeMessage } from '../../../core/engine/wire.ts';
import type { FromWorker, ToWorker } from './protocol.ts';
import type { WorkerLike } from './spawn-worker.ts';
import { taskQueue } from './task-queue.ts';

/** ms of decoding after which a message is handed on in a task of its own */
const DECODE_ALONE_MS = 8;

/** The page is served by a Node engine (node/engine/server.ts marks its HTML). */
export function servedByNodeEngine(doc: Document | undefined = globalThis.document): boolean {
  return doc?.querySelector('meta[name="heaplens-engine"][content="node"]') != null;
}

/** ws://…/<token>/engine for the page at http://…/<token>/… */
export function engineUrl(pageUrl: string): string {
  const u = new URL('engine', pageUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.search = '';
  u.hash = '';
  return u.href;
}

export function socketEngine(url: string = engineUrl(location.href)): WorkerLike {
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  const queued: Uint8Array<ArrayBuffer>[] = [];
  let gone = false;
  const w: WorkerLike = {
    onmessage: null,
    onerror: null,
    postMessage(msg: ToWorker) {
      if (gone) {
        w.onerror?.({ message: 'the engine (heaplens open) has stopped' });
        return;
      }
      const bytes = encodeMessage(msg);
      if (ws.readyState === WebSocket.OPEN) ws.send(bytes);
      else queued.push(bytes);
    },
    terminate() {
      gone = true;
      w.onmessage = null;
      ws.close();
    },
  };
  ws.onopen = () => {
    for (const b of queued.splice(0)) ws.send(b);
  };
  // a message whose decoding took a while is handed on in the next task (decoding and drawing are two tasks); what
  // follows it, a message that cannot be decoded and the socket's close included, after it
  const handOn = taskQueue<() => void>((f) => f());
  ws.onmessage = (ev: MessageEvent<ArrayBuffer>) => {
    let msg: FromWorker;
    const t0 = performance.now();
    try {
      msg = decodeMessage(new Uint8Array(ev.data)) as FromWorker;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      handOn(() => w.onerror?.({ message }), false);
      return;
    }
    handOn(() => w.onmessage?.({ data: msg }), performance.now() - t0 > DECODE_ALONE_MS);
  };
  ws.onclose = (ev: CloseEvent) =>
    handOn(() => {
      if (gone) return;
      gone = true;
      w.onerror?.({ message: `the engine (heaplens open) has stopped${ev.reason ? `: ${ev.reason}` : ''}` });
    }, false);
  return w;
}
