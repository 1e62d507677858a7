// A dump reader of the app's pool (dump-pool-web.ts): one dump per task, results sent back transferred.

/// <reference lib="webworker" />
import { serveDumpTasks, type ReadReply, type ToDumpWorker } from '../../../core/load/dump-pool.ts';
import { webInflater } from '../../../core/formats/inflate.ts';
import type { ReaderFile } from './dump-pool-web.ts';
import { readBlob } from './blob-read.ts';

declare const self: DedicatedWorkerGlobalScope;

serveDumpTasks<ReaderFile>(
  {
    post: (m, t) => self.postMessage(m, t ?? []),
    onMessage: (h) => (self.onmessage = (ev: MessageEvent<ToDumpWorker<unknown> | ReadReply>) => h(ev.data)),
  },
  (m, ask) => {
    const f = m.file;
    return {
      path: m.path,
      size: m.size,
      mtimeMs: m.mtimeMs,
      read: async (offset, length) => ('blob' in f ? readBlob(f.blob, offset, length) : ask(f.source, offset, length)),
    };
  },
  webInflater(),
);
