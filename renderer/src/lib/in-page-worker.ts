// The analysis worker's code run in the page (a report: its CSP allows no worker script, and the embedded job
// is small). Messages keep the worker's shape and stay asynchronous, so AnalysisClient cannot tell.

import { connect, receive } from '../worker/analysis.worker.ts';
import type { FromWorker, ToWorker } from './protocol.ts';
import type { WorkerLike } from './spawn-worker.ts';

export function inPageWorker(): WorkerLike {
  const w: WorkerLike = {
    onmessage: null,
    onerror: null,
    postMessage(msg: ToWorker) {
      setTimeout(() => {
        try {
          receive(msg);
        } catch (e) {
          w.onerror?.({ message: e instanceof Error ? e.message : String(e) });
        }
      }, 0);
    },
    terminate() {
      w.onmessage = null;
    },
  };
  connect((msg: FromWorker) => setTimeout(() => w.onmessage?.({ data: msg }), 0));
  return w;
}
