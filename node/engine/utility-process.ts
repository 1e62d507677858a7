// The desktop app's engine process (app/main.ts starts it with Electron's utilityProcess.fork): the Node engine
// (node/engine/port.ts) on the ports the main process hands over. Outside Electron (no parentPort) it does nothing.

import { reportAppFrom } from './engine.js';
import { startPortEngine, type ParentPortLike } from './port.js';

const parent = (process as unknown as { parentPort?: ParentPortLike }).parentPort;
if (parent)
  // dist/node/engine → dist/report-app
  startPortEngine(parent, reportAppFrom([new URL('../../report-app/', import.meta.url)]));
