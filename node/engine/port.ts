// The Node engine over a MessagePort: the desktop app's utility process (Electron `utilityProcess` with a
// `MessagePortMain` from `MessageChannelMain`) serves the renderer this way. Ports structured-clone their messages,
// so no codec is needed; answers are small (the renderer never receives the dumps). A plain module: Electron's port
// and Node's worker_threads MessagePort (tests) both fit `EnginePort` (node/engine/port.test.ts).

import type { FromEngine, ToEngine } from '../../core/engine/api.js';
import { NodeEngine } from './engine.js';

/** What the engine needs of a port: Electron's MessagePortMain, or a stand-in over Node's MessagePort. */
export interface EnginePort {
  postMessage(msg: FromEngine): void;
  on(event: 'message', listener: (ev: { data: unknown }) => void): void;
  on(event: 'close', listener: () => void): void;
  start(): void;
}

/** What the utility process's parent port gives: Electron's `process.parentPort` ('message' events with ports). */
export interface ParentPortLike {
  on(event: 'message', listener: (ev: { data: unknown; ports: EnginePort[] }) => void): void;
}

/** Answers one client's messages on its port. */
export function servePort(engine: NodeEngine, port: EnginePort): void {
  port.on('message', (ev) => engine.receive(ev.data as ToEngine, (msg) => port.postMessage(msg)));
  port.start();
}

/**
 * The utility process's engine: every port the main process hands over (one per window) is served by one engine,
 * which opens the paths the user dropped or picked (`openPaths`: the main process granted them).
 */
export function startPortEngine(
  parent: ParentPortLike,
  reportApp: () => { js: string; css: string } | null,
): NodeEngine {
  const engine = new NodeEngine({
    paths: null,
    allowPaths: true,
    symbols: { dirs: [], sysroot: null },
    info: { kind: 'node', label: "the desktop app's engine (Node)" },
    reportApp,
  });
  parent.on('message', (ev) => {
    // the main process's grants (what the user opened), then the windows' ports
    const grant = (ev.data as { grant?: unknown } | null)?.grant;
    if (typeof grant === 'string') engine.grant(grant);
    for (const port of ev.ports ?? []) servePort(engine, port);
  });
  return engine;
}
