// Worker-thread side of the CLI's dump pool (dump-pool.ts): opens each task's file by its path, and reads it in
// this thread (node-files.ts nodeInputFile's `blocking`).

import { parentPort } from 'node:worker_threads';
import { serveDumpTasks, type ReadReply, type ToDumpWorker } from '../../core/load/dump-pool.js';
import { nodeInflater } from './gunzip.js';
import { nodeInputFile } from './node-files.js';

const port = parentPort;
if (!port) throw new Error('dump-worker.ts runs as a worker thread (node/io/dump-pool.ts)');
serveDumpTasks<string>(
  {
    post: (m, t) => port.postMessage(m, t ?? []),
    onMessage: (h) => port.on('message', (m: ToDumpWorker<unknown> | ReadReply) => h(m)),
  },
  // a reader reads one file at a time: its reads wait here, not on a round trip to the I/O threads
  (m) => nodeInputFile(m.file, m.path, m.size, m.mtimeMs, { blocking: true }),
  nodeInflater,
);
