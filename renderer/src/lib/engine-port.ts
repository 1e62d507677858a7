// The desktop app's engine (a Node utility process, node/engine/port.ts) as the client's WorkerLike: the same
// messages over a MessagePort the preload hands to the page. Messages sent before the port arrives wait for it; a
// port that never comes, or an engine that exits, is told through onerror once (the window falls back to the
// in-page engine, state/shell.svelte.ts).

import type { FromWorker, ToWorker } from './protocol.ts';
import type { WorkerLike } from './spawn-worker.ts';

/** How long the page waits for the engine's port before reading in the page instead. */
const PORT_WAIT_MS = 10_000;

export function portEngine(target: Window = window): WorkerLike {
  let port: MessagePort | null = null;
  let gone = false;
  const queued: ToWorker[] = [];
  const fail = (message: string): void => {
    if (gone) return;
    gone = true;
    target.removeEventListener('message', onWindow);
    w.onerror?.({ message });
  };
  const w: WorkerLike = {
    onmessage: null,
    onerror: null,
    postMessage(msg: ToWorker) {
      if (gone) return fail("the desktop app's engine has stopped");
      if (port) port.postMessage(msg);
      else queued.push(msg);
    },
    terminate() {
      gone = true;
      w.onmessage = null;
      port?.close();
    },
  };
  function onWindow(ev: MessageEvent): void {
    if (ev.source !== target || !(ev.data as { heaplensEnginePort?: unknown } | null)?.heaplensEnginePort) return;
    const p = ev.ports[0];
    if (!p || port) return;
    port = p;
    target.removeEventListener('message', onWindow);
    clearTimeout(timer);
    p.onmessage = (e: MessageEvent<FromWorker>) => w.onmessage?.({ data: e.data });
    p.onmessageerror = () => fail("the desktop app's engine sent a message that could not be read");
    p.start();
    for (const m of queued.splice(0)) p.postMessage(m);
  }
  target.addEventListener('message', onWindow);
  const timer = setTimeout(() => {
    if (!port) fail("the desktop app's engine did not start");
  }, PORT_WAIT_MS);
  return w;
}
