// Worker-thread side of the dump pool (dump-pool.ts): reads one dump per message and posts the
// result back with its typed arrays transferred, not copied.

import { parentPort } from 'node:worker_threads';
import { dumpTaskTransfer, runDumpTask } from '../analysis/dump-task.js';
import type { SnapshotMeta } from '../analysis/process-builder.js';
import { nodeInflater } from './gunzip.js';
import { nodeInputFile } from './node-files.js';

export interface WorkerTask {
  id: number;
  absPath: string;
  path: string;
  size: number;
  mtimeMs: number | null;
  meta: SnapshotMeta;
}

const port = parentPort;
if (!port) throw new Error('dump-worker.ts runs as a worker thread (node-io/dump-pool.ts)');
port.postMessage({ id: 0, ready: true });
port.on('message', (m: WorkerTask) => {
  const file = nodeInputFile(m.absPath, m.path, m.size, m.mtimeMs);
  runDumpTask({ file, meta: m.meta }, { inflate: nodeInflater, onBytes: (bytes) => port.postMessage({ id: m.id, bytes }) }).then(
    (result) => port.postMessage({ id: m.id, result }, dumpTaskTransfer(result)),
    (e: unknown) => port.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
  );
});
